/**
 * The run page: the header (status, mode, budget bar with its thresholds, deadline and countdown,
 * attempt n of N, the id to resume with), the timeline with an event-type filter, and tabs: steps,
 * checkpoints, partial results, context plan, events, output / error — and for a flow its graph.
 * The tab and the filter live in the URL, so a view can be shared as it is.
 */
import { useState } from 'preact/hooks';
import type { BatonEvent } from '../../../core/index.ts';
import type { Timeline } from '../../../http/index.ts';
import { api } from '../api.ts';
import { BudgetBar, Countdown, ErrorNote, Json, Loading, StatusBadge } from '../components/bits.tsx';
import { FlowGraph } from '../components/flow-graph.tsx';
import { TimelineView } from '../components/timeline-view.tsx';
import { diffJson, formatDuration, formatUtc } from '../model/format.ts';
import { timelineLanes } from '../model/timeline-model.ts';
import { href, navigate } from '../router.ts';
import { config, tick } from '../state.ts';
import { useLoad } from '../use-load.ts';

const TABS = [
  ['steps', 'Steps'],
  ['checkpoints', 'Checkpoints'],
  ['partials', 'Partial results'],
  ['context', 'Context plan'],
  ['events', 'Events'],
  ['output', 'Output / error'],
] as const;
type Tab = (typeof TABS)[number][0];

function Header({ t }: { t: Timeline }) {
  const run = t.run;
  const budget = run.insight.budget;
  const plan = run.insight.attempts;
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<Error>();
  const ended = run.finishedAt !== null;
  const act = async (what: 'cancel' | 'resume') => {
    setError(undefined);
    try {
      if (what === 'cancel') await api.cancel(run.id);
      else await api.resume(run.id);
    } catch (e) {
      setError(e as Error);
    }
  };
  return (
    <header class="run-header card">
      <h1>
        <span class="mono">{run.id}</span> <span class="muted">{run.name}</span>
      </h1>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={run.status} reason={run.waitReason} />
          </dd>
        </div>
        <div>
          <dt>Mode</dt>
          <dd>
            <span class={`badge m-${run.insight.mode}`} data-testid="mode">
              {run.insight.mode}
            </span>
          </dd>
        </div>
        <div>
          <dt>Attempt</dt>
          <dd data-testid="attempt">
            {/* N grows when a person grants another attempt (retry_extended) beyond the policy's. */}
            {run.kind === 'flow'
              ? `${t.steps.length} steps`
              : `${run.attempt} of ${plan ? Math.max(plan.maxAttempts, run.attempt) : '?'}`}
          </dd>
        </div>
        <div>
          <dt>Deadline</dt>
          <dd>
            {budget?.deadlineAt != null ? (
              <>
                {formatUtc(budget.deadlineAt)}{' '}
                {ended ? (
                  <span class="muted">ended with {formatDuration(budget.remainingMs ?? 0)} left</span>
                ) : (
                  <Countdown at={budget.deadlineAt} />
                )}
              </>
            ) : (
              <span class="muted">set at the first attempt</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Resume with</dt>
          <dd>
            <code>{run.id}</code>{' '}
            <button
              type="button"
              class="small"
              onClick={() => {
                void navigator.clipboard?.writeText(run.id).then(() => setCopied(true));
              }}
            >
              {copied ? 'copied' : 'copy'}
            </button>
          </dd>
        </div>
      </dl>
      <div class="budget-row">
        <span>Budget</span>
        <BudgetBar budget={budget} ended={ended} />
      </div>
      {plan && (
        <p class="muted plan">
          Attempt timeouts {plan.timeoutsMs.map(formatDuration).join(' → ')}; waits{' '}
          {plan.backoffMs.map(formatDuration).join(', ') || 'none'}
        </p>
      )}
      {!config.readOnly && (
        <div class="actions">
          {!ended && (
            <button type="button" onClick={() => void act('cancel')}>
              Cancel run
            </button>
          )}
          {(run.status === 'failed' ||
            run.status === 'partial' ||
            run.status === 'cancelled' ||
            run.waitReason === 'resume') && (
            <button type="button" onClick={() => void act('resume')}>
              Resume run
            </button>
          )}
        </div>
      )}
      <ErrorNote error={error} />
    </header>
  );
}

function EventFilter({
  t,
  hidden,
  onChange,
}: {
  t: Timeline;
  hidden: ReadonlySet<string>;
  onChange: (h: Set<string>) => void;
}) {
  const types = Object.entries(t.eventCounts).sort((a, b) => a[0].localeCompare(b[0]));
  return (
    <fieldset class="event-filter">
      <legend>Event types</legend>
      {types.map(([type, n]) => (
        <label key={type}>
          <input
            type="checkbox"
            checked={!hidden.has(type)}
            onChange={(e) => {
              const next = new Set(hidden);
              if (e.currentTarget.checked) next.delete(type);
              else next.add(type);
              onChange(next);
            }}
          />
          {type} <span class="muted">({n})</span>
        </label>
      ))}
      <button type="button" class="small" onClick={() => onChange(new Set())}>
        all
      </button>
      <button type="button" class="small" onClick={() => onChange(new Set(types.map(([k]) => k)))}>
        none
      </button>
    </fieldset>
  );
}

const SHOWN_EVENTS = 300;

function EventsTab({ events }: { events: BatonEvent[] }) {
  const [all, setAll] = useState(false);
  const shown = all ? events : events.slice(-SHOWN_EVENTS);
  return (
    <>
      {events.length > shown.length && (
        <p>
          Showing the last {shown.length} of {events.length}.{' '}
          <button type="button" class="small" onClick={() => setAll(true)}>
            Show all
          </button>
        </p>
      )}
      <ol class="events" data-testid="events">
        {shown.map((e) => (
          <li key={e.id}>
            <time dateTime={new Date(e.at).toISOString()}>{formatUtc(e.at)}</time> <b>{e.type}</b>{' '}
            {e.runId !== e.rootId && <span class="muted">{e.runId}</span>}{' '}
            <code>{JSON.stringify(e.data).slice(0, 240)}</code>
          </li>
        ))}
      </ol>
    </>
  );
}

function TabBody({ tab, t, hidden }: { tab: Tab; t: Timeline; hidden: ReadonlySet<string> }) {
  switch (tab) {
    case 'steps':
      return t.memo.length === 0 ? (
        <p class="muted">No memoized step yet.</p>
      ) : (
        <ul class="plain">
          {t.memo.map((m) => (
            <li key={`${m.runId}/${m.key}`}>
              <details>
                <summary>
                  <b>{m.key}</b>{' '}
                  <span class="muted">
                    {m.runId !== t.run.id ? m.runId : ''} attempt {m.attempt} · {formatUtc(m.createdAt)}
                  </span>
                </summary>
                <Json value={m.output} />
              </details>
            </li>
          ))}
        </ul>
      );
    case 'checkpoints':
      return t.checkpoints.length === 0 ? (
        <p class="muted">No checkpoint yet.</p>
      ) : (
        <ol class="plain">
          {t.checkpoints.map((c, i) => {
            const prev = t.checkpoints.slice(0, i).findLast((p) => p.runId === c.runId);
            const changes = prev ? diffJson(prev.state, c.state) : [];
            return (
              <li key={`${c.runId}#${c.seq}`} class="checkpoint-item">
                <details>
                  <summary>
                    <b>#{c.seq}</b> {c.runId !== t.run.id && <span class="muted">{c.runId}</span>} attempt{' '}
                    {c.attempt} · {String(c.record.progress_percentage ?? '?')}% · {formatUtc(c.createdAt)} ·{' '}
                    {c.invalid ? (
                      <span class="badge s-failed">invalid: {c.invalid}</span>
                    ) : (
                      <span class="badge s-succeeded">valid</span>
                    )}
                  </summary>
                  <h3>Change since the previous checkpoint</h3>
                  {!prev ? (
                    <p class="muted">The first checkpoint.</p>
                  ) : changes.length === 0 ? (
                    <p class="muted">No change in the state.</p>
                  ) : (
                    <ul class="diff">
                      {changes.map((ch) => (
                        <li key={ch.path} class={ch.kind}>
                          <code>{ch.path}</code> {ch.kind}:{' '}
                          {ch.kind !== 'added' && <code>{JSON.stringify(ch.before)}</code>}
                          {ch.kind === 'changed' && ' → '}
                          {ch.kind !== 'removed' && <code>{JSON.stringify(ch.after)}</code>}
                        </li>
                      ))}
                    </ul>
                  )}
                  <h3>Document</h3>
                  <Json value={c.record} />
                  <h3>State</h3>
                  <Json value={c.state} />
                </details>
              </li>
            );
          })}
        </ol>
      );
    case 'partials':
      return t.partials.length === 0 ? (
        <p class="muted">No partial result.</p>
      ) : (
        <ol class="plain">
          {t.partials.map((p) => (
            <li key={`${p.runId}#${p.seq}`}>
              <span class="muted">
                {p.runId !== t.run.id ? `${p.runId} · ` : ''}attempt {p.attempt} · {formatUtc(p.createdAt)}
              </span>
              <Json value={p.findings} />
            </li>
          ))}
        </ol>
      );
    case 'context': {
      const plans = t.events.filter((e) => e.type === 'context:planned') as BatonEvent<'context:planned'>[];
      return plans.length === 0 ? (
        <p class="muted">No context plan: this run's inputs hold no data references.</p>
      ) : (
        plans.map((e) => <ContextPlan key={e.id} e={e} />)
      );
    }
    case 'events':
      return <EventsTab events={t.events.filter((e) => !hidden.has(e.type))} />;
    case 'output':
      return (
        <>
          {t.run.error && (
            <>
              <h3>Error</h3>
              <Json value={t.run.error} />
            </>
          )}
          <h3>Output</h3>
          {t.run.output === null || t.run.output === undefined ? (
            <p class="muted">None yet.</p>
          ) : (
            <Json value={t.run.output} />
          )}
        </>
      );
    default:
      return null;
  }
}

interface PlannedInput {
  name?: string;
  tokens?: number;
  mode?: string;
  transfer_mode?: string;
  [k: string]: unknown;
}

function ContextPlan({ e }: { e: BatonEvent<'context:planned'> }) {
  const cm = e.data.report.context_management as { inputs?: PlannedInput[]; [k: string]: unknown };
  const inputs = Array.isArray(cm.inputs) ? cm.inputs : [];
  return (
    <div class="context-plan">
      <p class="muted">{e.runId}</p>
      {inputs.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Input</th>
              <th scope="col">Tokens</th>
              <th scope="col">Transfer mode</th>
            </tr>
          </thead>
          <tbody>
            {inputs.map((i, n) => (
              <tr key={String(i.name ?? n)}>
                <td>{String(i.name ?? n)}</td>
                <td>{String(i.tokens ?? '?')}</td>
                <td>{String(i.transfer_mode ?? i.mode ?? '?')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Json value={e.data.report} />
      {e.data.notes.length > 0 && (
        <ul>
          {e.data.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function RunPage({ id, params }: { id: string; params: URLSearchParams }) {
  const { data, error } = useLoad<Timeline>(
    () => api.timeline(id),
    `run-${id}`,
    (events) => events.some((e) => e.rootId === id || e.runId === id),
  );
  const tab = (TABS.find(([k]) => k === params.get('tab'))?.[0] ?? 'steps') as Tab;
  const hidden = new Set((params.get('hide') ?? '').split(',').filter((s) => s !== ''));
  const setParams = (changes: Record<string, string>) => {
    const next = Object.fromEntries(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next[k] = v;
      else delete next[k];
    }
    navigate(href(`/runs/${encodeURIComponent(id)}`, next), true);
  };
  // The 1 s tick may trail the newest event by up to a second: never draw "now" before it.
  const now = Math.max(tick.value, data?.events.at(-1)?.at ?? 0);
  if (error && !data)
    return (
      <main id="main" class="page">
        <h1>Run {id}</h1>
        <ErrorNote error={error} />
      </main>
    );
  if (!data)
    return (
      <main id="main" class="page">
        <h1>Run {id}</h1>
        <Loading />
      </main>
    );
  const lanes = timelineLanes(data, data.run.finishedAt ?? now);
  return (
    <main id="main" class="page">
      <Header t={data} />
      {data.steps.length > 0 && (
        <section class="card" aria-labelledby="graph-h">
          <h2 id="graph-h">Steps</h2>
          <div class="scroll-x">
            <FlowGraph steps={data.steps} />
          </div>
          <div class="table-wrap">
            <table class="step-table">
              <caption class="sr-only">Steps with their budgets</caption>
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Budget</th>
                  <th scope="col">Deadline</th>
                </tr>
              </thead>
              <tbody>
                {data.steps.map((s) => (
                  <tr key={s.id} data-step={s.stepId ?? s.id}>
                    <td>
                      <a href={href(`/runs/${encodeURIComponent(s.id)}`)}>{s.stepId ?? s.name}</a>
                    </td>
                    <td>
                      <StatusBadge status={s.status} reason={s.waitReason} />
                    </td>
                    <td>
                      {s.attempt} of{' '}
                      {s.insight.attempts ? Math.max(s.insight.attempts.maxAttempts, s.attempt) : '?'}
                    </td>
                    <td>
                      <BudgetBar budget={s.insight.budget} ended={s.finishedAt !== null} small />
                    </td>
                    <td>
                      {s.insight.budget?.deadlineAt != null && s.finishedAt === null ? (
                        <Countdown at={s.insight.budget.deadlineAt} />
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section class="card" aria-labelledby="timeline-h">
        <h2 id="timeline-h">Timeline</h2>
        <EventFilter t={data} hidden={hidden} onChange={(h) => setParams({ hide: [...h].join(',') })} />
        <div class="scroll-x">
          <TimelineView timeline={data} lanes={lanes} now={now} hidden={hidden} />
        </div>
        {data.truncated && <p class="muted">Only the first {data.events.length} events are shown.</p>}
      </section>
      <section class="card" aria-label="Details">
        <div role="tablist" aria-label="Run details" class="tabs">
          {TABS.map(([k, label]) => (
            <button
              key={k}
              type="button"
              role="tab"
              id={`tab-${k}`}
              aria-selected={tab === k}
              aria-controls="tab-panel"
              tabIndex={tab === k ? 0 : -1}
              onClick={() => setParams({ tab: k })}
              onKeyDown={(e) => {
                const i = TABS.findIndex(([t]) => t === tab);
                const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
                if (!step) return;
                const next = TABS[(i + step + TABS.length) % TABS.length]?.[0] ?? 'steps';
                setParams({ tab: next });
                requestAnimationFrame(() => document.getElementById(`tab-${next}`)?.focus());
              }}
            >
              {label}
            </button>
          ))}
        </div>
        <div role="tabpanel" id="tab-panel" aria-labelledby={`tab-${tab}`}>
          <TabBody tab={tab} t={data} hidden={hidden} />
        </div>
      </section>
    </main>
  );
}
