/**
 * The runs list: filters kept in the URL (status, waiting reason, task, created since, budget status),
 * a small budget bar and countdown per row, paging on the server, and bulk cancel / resume that
 * first says how many runs it will touch.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { BulkAnswer, RunFilter, RunPage } from '../../../client/index.ts';
import { ApiError, api } from '../api.ts';
import { BudgetBar, Countdown, ErrorNote, Loading, RunLink, StatusBadge } from '../components/bits.tsx';
import { formatUtc } from '../model/format.ts';
import { href, navigate } from '../router.ts';
import { config } from '../state.ts';
import { useLoad } from '../use-load.ts';

const FILTERS = {
  status: ['queued', 'running', 'waiting', 'succeeded', 'partial', 'failed', 'cancelled', 'expired'],
  waitReason: ['timer', 'decision', 'dependency', 'delivery', 'resume'],
  budgetStatus: ['on_track', 'warning', 'time_critical'],
} as const;
const LABELS: Record<string, string> = {
  status: 'Status',
  waitReason: 'Waiting for',
  budgetStatus: 'Budget',
  name: 'Task',
  createdAfter: 'Created since',
};
const PAGE = 50;

function filterOf(params: URLSearchParams): RunFilter {
  const f: Record<string, string> = {};
  for (const k of ['status', 'waitReason', 'budgetStatus', 'name', 'createdAfter']) {
    const v = params.get(k);
    if (v) f[k] = v;
  }
  return f as RunFilter;
}

interface Pending {
  action: 'cancel' | 'resume';
  target: { filter: RunFilter } | { ids: string[] };
  count: BulkAnswer;
}

export function RunsPage({ params }: { params: URLSearchParams }) {
  const filter = filterOf(params);
  const cursor = params.get('cursor') ?? undefined;
  const key = params.toString();
  const { data, error, reload } = useLoad<RunPage>(
    () => api.runs({ ...filter, ...(cursor ? { cursor } : {}), limit: PAGE }),
    key,
    (events) => events.some((e) => e.type.startsWith('run:')),
  );
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [pending, setPending] = useState<Pending>();
  const confirmRef = useRef<HTMLButtonElement>(null);
  // The question appears after the click: take the keyboard focus to its answer.
  useEffect(() => confirmRef.current?.focus(), [pending]);
  const [outcome, setOutcome] = useState<string>();
  const [actionError, setActionError] = useState<Error>();

  const setParam = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete('cursor');
    setSelected(new Set());
    navigate(href('/runs', Object.fromEntries(next)), true);
  };

  const ask = async (action: 'cancel' | 'resume') => {
    setOutcome(undefined);
    setActionError(undefined);
    const target = selected.size > 0 ? { ids: [...selected] } : { filter };
    try {
      setPending({ action, target, count: await api.bulk(action, target, true) });
    } catch (e) {
      setActionError(e as Error);
    }
  };
  const confirm = async () => {
    if (!pending) return;
    try {
      const done = await api.bulk(pending.action, pending.target, false);
      setOutcome(
        `${pending.action === 'cancel' ? 'Cancelled' : 'Resumed'} ${done.done ?? 0} run${done.done === 1 ? '' : 's'}` +
          (done.skipped?.length ? `; ${done.skipped.length} changed meanwhile and were left alone` : ''),
      );
      setSelected(new Set());
      reload();
    } catch (e) {
      setActionError(e instanceof ApiError ? e : (e as Error));
    }
    setPending(undefined);
  };

  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };

  return (
    <main id="main" class="page">
      <h1>Runs</h1>
      <form class="filters card" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        {(Object.keys(FILTERS) as Array<keyof typeof FILTERS>).map((name) => (
          <label key={name}>
            {LABELS[name]}
            <select value={params.get(name) ?? ''} onChange={(e) => setParam(name, e.currentTarget.value)}>
              <option value="">any</option>
              {FILTERS[name].map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </label>
        ))}
        <label>
          {LABELS.name}
          <input
            type="search"
            value={params.get('name') ?? ''}
            placeholder="task or flow name"
            onChange={(e) => setParam('name', e.currentTarget.value.trim())}
          />
        </label>
        <label>
          {LABELS.createdAfter}
          <input
            type="datetime-local"
            value={params.get('createdAfter') ? toLocalInput(params.get('createdAfter') as string) : ''}
            onChange={(e) =>
              setParam(
                'createdAfter',
                e.currentTarget.value ? new Date(e.currentTarget.value).toISOString() : '',
              )
            }
          />
        </label>
      </form>

      {!config.readOnly && (
        <fieldset class="bulk">
          <legend class="sr-only">Bulk actions</legend>
          <span>{selected.size > 0 ? `${selected.size} selected` : 'All runs matching the filters'}:</span>
          <button type="button" onClick={() => void ask('cancel')}>
            Cancel…
          </button>
          <button type="button" onClick={() => void ask('resume')}>
            Resume…
          </button>
        </fieldset>
      )}
      {pending && (
        <div class="confirm card" role="alertdialog" aria-labelledby="confirm-text">
          <p id="confirm-text">
            {pending.count.eligible === 0
              ? `No run here can be ${pending.action === 'cancel' ? 'cancelled' : 'resumed'} (${pending.count.matched} matched).`
              : `This will ${pending.action} ${pending.count.eligible} run${pending.count.eligible === 1 ? '' : 's'}` +
                ` (${pending.count.matched} matched${pending.count.capped ? ', more exist: narrow the filter' : ''}).`}
          </p>
          {pending.count.eligible > 0 && (
            <button type="button" class="danger" onClick={() => void confirm()} ref={confirmRef}>
              {pending.action === 'cancel' ? 'Cancel' : 'Resume'} {pending.count.eligible} run
              {pending.count.eligible === 1 ? '' : 's'}
            </button>
          )}
          <button type="button" onClick={() => setPending(undefined)}>
            Keep them
          </button>
        </div>
      )}
      {outcome && (
        <p class="ok" role="status">
          {outcome}
        </p>
      )}
      <ErrorNote error={actionError ?? error} />
      {!data ? (
        <Loading />
      ) : data.runs.length === 0 ? (
        <p class="muted">No runs match.</p>
      ) : (
        <div class="table-wrap">
          <table class="runs">
            <caption class="sr-only">Runs, newest first</caption>
            <thead>
              <tr>
                {!config.readOnly && (
                  <th scope="col">
                    <span class="sr-only">Select</span>
                  </th>
                )}
                <th scope="col">Run</th>
                <th scope="col">Task</th>
                <th scope="col">Status</th>
                <th scope="col">Budget</th>
                <th scope="col">Deadline</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.runs.map((r) => (
                <tr key={r.id}>
                  {!config.readOnly && (
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`select ${r.id}`}
                        checked={selected.has(r.id)}
                        onChange={() => toggle(r.id)}
                      />
                    </td>
                  )}
                  <td>
                    <RunLink run={r} />
                  </td>
                  <td>{r.name}</td>
                  <td>
                    <StatusBadge status={r.status} reason={r.waitReason} />
                  </td>
                  <td>
                    <BudgetBar budget={r.insight.budget} ended={r.finishedAt !== null} small />
                  </td>
                  <td>
                    {r.insight.budget?.deadlineAt != null && r.finishedAt === null ? (
                      <Countdown at={r.insight.budget.deadlineAt} />
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td>{formatUtc(r.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        {cursor && (
          <button type="button" onClick={() => history.back()}>
            ← Newer
          </button>
        )}
        {data?.nextCursor && (
          <a href={href('/runs', { ...Object.fromEntries(params), cursor: data.nextCursor })}>Older →</a>
        )}
      </nav>
    </main>
  );
}

function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
