/** Small shared pieces: status badges, countdowns, the budget bar, errors, JSON. */
import type { ComponentChildren } from 'preact';
import type { BudgetView } from '../../../http/index.ts';
import { ApiError } from '../api.ts';
import { countdown, formatDuration, formatUtc } from '../model/format.ts';
import { href } from '../router.ts';
import { tick } from '../state.ts';

export function StatusBadge({ status, reason }: { status: string; reason?: string | null }) {
  return (
    <span class={`badge s-${status}`}>
      {status}
      {reason ? `: ${reason}` : ''}
    </span>
  );
}

export function Countdown({ at, label }: { at: number; label?: string }) {
  const now = tick.value;
  return (
    <time dateTime={new Date(at).toISOString()} title={formatUtc(at)} class={at - now < 0 ? 'past' : ''}>
      {label ? `${label} ` : ''}
      {countdown(at, now)}
    </time>
  );
}

/**
 * The budget as a bar: spent time filled, the warning and time_critical thresholds drawn where the
 * remaining time crosses them, coloured by the current status.
 */
export function BudgetBar({
  budget,
  ended,
  small = false,
}: {
  budget: BudgetView | null;
  /** A finished run's budget stands still at its end. */
  ended: boolean;
  small?: boolean;
}) {
  if (!budget) return <span class="muted">no budget</span>;
  const now = tick.value;
  const live =
    budget.deadlineAt === null
      ? budget.budgetMs
      : ended
        ? (budget.remainingMs ?? budget.budgetMs)
        : budget.deadlineAt - now;
  const spent = Math.min(1, Math.max(0, 1 - live / budget.budgetMs));
  const status =
    budget.deadlineAt === null
      ? 'on_track'
      : live < budget.criticalBelowMs
        ? 'time_critical'
        : live < budget.warningBelowMs
          ? 'warning'
          : 'on_track';
  const warnAt = 1 - budget.warningBelowMs / budget.budgetMs;
  const critAt = 1 - budget.criticalBelowMs / budget.budgetMs;
  const pct = Math.round(spent * 100);
  return (
    // biome-ignore lint/a11y/useSemanticElements: <meter> cannot draw the threshold marks on the bar
    <div
      class={`budget ${small ? 'small' : ''} b-${status}`}
      role="meter"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct}
      aria-label={`budget ${pct}% spent, ${status.replace('_', ' ')}`}
      data-status={status}
    >
      <div class="fill" style={{ width: `${spent * 100}%` }} />
      {warnAt > 0 && <div class="mark warn" style={{ left: `${warnAt * 100}%` }} title="warning threshold" />}
      {critAt > 0 && (
        <div class="mark crit" style={{ left: `${critAt * 100}%` }} title="time_critical threshold" />
      )}
      {!small && (
        <div class="budget-text">
          {pct}% of {formatDuration(budget.budgetMs)} · {status.replace('_', ' ')}
        </div>
      )}
    </div>
  );
}

export function RunLink({ run }: { run: { id?: string; runId?: string; rootId: string } }) {
  const id = run.id ?? run.runId ?? run.rootId;
  return (
    <a href={href(`/runs/${encodeURIComponent(run.rootId)}`)} class="mono">
      {id}
    </a>
  );
}

export function ErrorNote({ error }: { error: Error | undefined }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.code}: ${error.message}` : error.message;
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export function Section({
  title,
  children,
  id,
}: {
  title: string;
  children: ComponentChildren;
  id?: string;
}) {
  return (
    <section aria-labelledby={id ?? title} class="card">
      <h2 id={id ?? title}>{title}</h2>
      {children}
    </section>
  );
}

export function Loading() {
  return (
    <p class="muted" aria-busy="true">
      Loading…
    </p>
  );
}
