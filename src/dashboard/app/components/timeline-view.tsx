/**
 * The timeline: one lane per attempt with its timeout window (so the ×2 / ×3 growth and the retry
 * waits show), steps as bars, checkpoints as ticks with their progress, partial results, decision
 * waits, timers, the delivery due time and a "now" line; long idle gaps are drawn narrow and marked.
 */
import type { Timeline } from '../../../http/index.ts';
import { formatDuration, formatUtc } from '../model/format.ts';
import { busySpans, compressedScale, type Lane, timelineRange } from '../model/timeline-model.ts';

const LANE_H = 34;
const LABEL_W = 190;
const W = 1000;

export function TimelineView({
  timeline,
  lanes,
  now,
  hidden,
}: {
  timeline: Timeline;
  lanes: Lane[];
  now: number;
  /** Event types filtered out: their items are not drawn. */
  hidden: ReadonlySet<string>;
}) {
  if (lanes.length === 0) return <p class="muted">No attempt has started yet.</p>;
  const [start, end] = timelineRange(timeline.run, lanes, now);
  const scale = compressedScale(start, end, busySpans(lanes));
  const x = (t: number) => LABEL_W + scale.x(t) * (W - LABEL_W - 10);
  const height = lanes.length * LANE_H + 34;
  const active = timeline.run.finishedAt === null;
  const deadline = timeline.run.insight.budget?.deadlineAt ?? null;
  return (
    <figure class="timeline">
      <svg
        viewBox={`0 0 ${W} ${height}`}
        role="img"
        aria-labelledby="timeline-title timeline-desc"
        preserveAspectRatio="none"
      >
        <title id="timeline-title">Timeline of {timeline.run.id}</title>
        <desc id="timeline-desc">
          {lanes.length} lane{lanes.length === 1 ? '' : 's'} from {formatUtc(start)} to {formatUtc(end)}
          {scale.segments.some((s) => s.compressed) ? '; idle gaps compressed' : ''}
        </desc>
        {scale.segments
          .filter((s) => s.compressed)
          .map((s) => (
            <g key={`gap-${s.from}`} class="gap">
              <rect x={x(s.from)} y={0} width={Math.max(2, x(s.to) - x(s.from))} height={height - 20} />
              <text x={(x(s.from) + x(s.to)) / 2} y={height - 6} text-anchor="middle">
                ⋯ {formatDuration(s.to - s.from)}
              </text>
            </g>
          ))}
        {lanes.map((lane, i) => {
          const y = i * LANE_H + 6;
          return (
            <g key={lane.key} class="lane" data-lane={lane.key}>
              <text x={4} y={y + 18} class="lane-label">
                {lane.label.length > 30 ? `${lane.label.slice(0, 29)}…` : lane.label}
              </text>
              {lane.items
                .filter((it) => !hidden.has(it.type) || it.kind === 'attempt' || it.kind === 'window')
                .map((it, j) => {
                  const x0 = x(it.from);
                  const x1 = Math.max(x0 + (it.from === it.to ? 0 : 2), x(it.to));
                  const key = `${lane.key}-${j}`;
                  switch (it.kind) {
                    case 'window':
                      return (
                        <rect key={key} class="window" x={x0} y={y} width={x1 - x0} height={26}>
                          <title>{it.label}</title>
                        </rect>
                      );
                    case 'attempt':
                      return (
                        <rect
                          key={key}
                          class={`attempt o-${it.outcome}`}
                          x={x0}
                          y={y + 6}
                          width={x1 - x0}
                          height={14}
                        >
                          <title>
                            {it.label}: {it.outcome}, {formatDuration(it.to - it.from)}
                          </title>
                        </rect>
                      );
                    case 'wait':
                    case 'timer':
                    case 'decision':
                      return (
                        <rect key={key} class={it.kind} x={x0} y={y + 9} width={x1 - x0} height={8}>
                          <title>{it.label}</title>
                        </rect>
                      );
                    case 'step':
                      return (
                        <rect
                          key={key}
                          class="step"
                          x={x0}
                          y={y + 21}
                          width={Math.max(2, x1 - x0)}
                          height={4}
                        >
                          <title>{it.label}</title>
                        </rect>
                      );
                    case 'checkpoint':
                      return (
                        <g key={key} class="checkpoint">
                          <line x1={x0} x2={x0} y1={y} y2={y + 26} />
                          {it.progress !== null && it.progress !== undefined && (
                            <text x={x0 + 2} y={y + 5}>
                              {Math.round(it.progress)}%
                            </text>
                          )}
                          <title>{it.label}</title>
                        </g>
                      );
                    case 'partial':
                      return (
                        <circle key={key} class="partial" cx={x0} cy={y + 3} r={3}>
                          <title>{it.label}</title>
                        </circle>
                      );
                    case 'delivery':
                      return (
                        <g key={key} class="delivery">
                          <line x1={x0} x2={x0} y1={0} y2={height - 20} />
                          <title>{it.label}</title>
                        </g>
                      );
                    default:
                      return null;
                  }
                })}
            </g>
          );
        })}
        {deadline !== null && deadline >= start && deadline <= end && (
          <g class="deadline">
            <line x1={x(deadline)} x2={x(deadline)} y1={0} y2={height - 20} />
            <title>budget deadline {formatUtc(deadline)}</title>
          </g>
        )}
        {active && (
          <g class="now" data-now={now}>
            <line x1={x(now)} x2={x(now)} y1={0} y2={height - 20} />
            <text x={x(now) + 3} y={height - 24}>
              now
            </text>
          </g>
        )}
      </svg>
      <figcaption class="legend">
        <span class="k window">timeout window</span> <span class="k attempt">attempt</span>{' '}
        <span class="k wait">retry wait</span> <span class="k step">step</span>{' '}
        <span class="k checkpoint">checkpoint</span> <span class="k partial">partial</span>{' '}
        <span class="k decision">decision</span> <span class="k delivery">delivery due</span>{' '}
        <span class="k now">now</span>
      </figcaption>
    </figure>
  );
}
