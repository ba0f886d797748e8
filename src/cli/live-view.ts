/**
 * What `baton run` and `baton resume` show while a run goes. On a terminal: one line per step
 * (status, elapsed, attempts, checkpoints) with a progress bar where the task reports progress,
 * redrawn in place by cli-progress. Piped: one plain line per event, nothing redrawn.
 */
import cliProgress from 'cli-progress';
import type { BatonEvent } from '../core/index.ts';
import { formatDuration } from '../time/index.ts';
import {
  applyEvent,
  describeEvent,
  elapsedMs,
  newRunView,
  type RunView,
  type StepRow,
} from './view-model.ts';

export interface LiveView {
  /** `quiet`: fold into the view without printing (events from before a resume). */
  onEvent(e: BatonEvent, quiet?: boolean): void;
  stop(): void;
  readonly view: RunView;
}

const ICON: Record<string, string> = {
  queued: '·',
  running: '▶',
  succeeded: '✔',
  partial: '◐',
  failed: '✖',
  cancelled: '⊘',
};

function bar(row: StepRow, width: number): string {
  if (row.total === null || row.total <= 0 || row.done === null) return ' '.repeat(width + 7);
  const frac = Math.min(1, row.done / row.total);
  const full = Math.round(frac * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}] ${String(Math.round(frac * 100)).padStart(3)}%`;
}

export function formatRow(row: StepRow, now: number, labelWidth: number): string {
  const icon = ICON[row.status] ?? (row.status.startsWith('waiting') ? '…' : '?');
  const elapsed = row.startedAt === null ? '' : formatDuration(elapsedMs(row, now));
  const items = row.total !== null && row.done !== null ? ` ${row.done}/${row.total}` : '';
  return [
    icon,
    row.label.padEnd(labelWidth),
    row.status.padEnd(16),
    bar(row, 20),
    elapsed.padStart(7),
    `try ${row.attempt || '-'}`,
    `ckpt ${row.checkpoints}`,
    row.timeStatus ? `${row.timeStatus} ${formatDuration((row.remainingSeconds ?? 0) * 1000)} left` : '',
    `${items}${row.note ? `  ${row.note}` : ''}`,
  ].join('  ');
}

export function createLiveView(
  rootId: string,
  options: { tty: boolean; now: () => number; out?: NodeJS.WriteStream; shown?: ReadonlySet<string> },
) {
  const view = newRunView(rootId);
  const out = options.out ?? process.stderr;
  if (!options.tty) {
    const short = (id: string) => (id === rootId ? 'run' : id.slice(rootId.length + 1) || id);
    return {
      view,
      onEvent(e: BatonEvent, quiet = false) {
        applyEvent(view, e);
        if (quiet) return;
        if (e.type === 'log:message' && options.shown?.has(String((e.data as { message?: unknown }).message)))
          return;
        const t = new Date(e.at).toISOString().slice(11, 23);
        const text = describeEvent(e);
        out.write(`${t}  ${short(e.runId).padEnd(12)}  ${e.type.padEnd(18)}  ${text}\n`);
      },
      stop() {},
    } satisfies LiveView;
  }
  const multibar = new cliProgress.MultiBar(
    {
      stream: out,
      hideCursor: true,
      clearOnComplete: false,
      autopadding: false,
      fps: 10,
      format: (_opts, _params, payload: { row: StepRow; width: number }) =>
        formatRow(payload.row, options.now(), payload.width),
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  const refresh = () => {
    const width = Math.max(8, ...[...view.rows.values()].map((r) => r.label.length));
    for (const [id, row] of view.rows) {
      let b = bars.get(id);
      if (!b) {
        b = multibar.create(100, 0, { row, width });
        bars.set(id, b);
      }
      b.update(row.total && row.done !== null ? Math.round((row.done / row.total) * 100) : 0, { row, width });
    }
  };
  return {
    view,
    onEvent(e: BatonEvent) {
      applyEvent(view, e);
      refresh();
    },
    stop() {
      refresh();
      multibar.stop();
    },
  } satisfies LiveView;
}
