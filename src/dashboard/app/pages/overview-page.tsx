/** Overview and health: counts by status, runs at risk, next deliveries and decision timeouts, recent failures, workers, the store. */
import type { Overview } from '../../../client/index.ts';
import { api } from '../api.ts';
import {
  BudgetBar,
  Countdown,
  ErrorNote,
  Loading,
  RunLink,
  Section,
  StatusBadge,
} from '../components/bits.tsx';
import { formatDuration } from '../model/format.ts';
import { href } from '../router.ts';
import { tick } from '../state.ts';
import { useLoad } from '../use-load.ts';

const STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'partial', 'failed', 'cancelled', 'expired'];

export function OverviewPage() {
  const { data, error } = useLoad<Overview>(() => api.overview(), 'overview');
  return (
    <main id="main" class="page">
      <h1>Overview</h1>
      <ErrorNote error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          <ul class="counts" aria-label="Runs by status">
            {STATUSES.map((s) => (
              <li key={s}>
                <a href={href('/runs', { status: s })} class={`count s-${s}`}>
                  <span class="n">{data.counts[s] ?? 0}</span> {s}
                </a>
              </li>
            ))}
            <li>
              <a href={href('/decisions')} class="count s-waiting">
                <span class="n">{data.openDecisions}</span> open decisions
              </a>
            </li>
          </ul>
          <div class="grid">
            <Section title="Runs at risk">
              {data.atRisk.length === 0 ? (
                <p class="muted">No running run is in warning or time_critical.</p>
              ) : (
                <ul class="rows">
                  {data.atRisk.map((r) => (
                    <li key={r.id}>
                      <RunLink run={r} /> <span>{r.name}</span>
                      <BudgetBar budget={r.insight.budget} ended={false} small />
                      {r.insight.budget?.deadlineAt != null && (
                        <Countdown at={r.insight.budget.deadlineAt} label="deadline" />
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </Section>
            <Section title="Next deliveries">
              {data.nextDeliveries.length === 0 ? (
                <p class="muted">Nothing scheduled.</p>
              ) : (
                <ul class="rows">
                  {data.nextDeliveries.map((d) => (
                    <li key={d.runId}>
                      <RunLink run={d} /> “{d.schedule.text}” <Countdown at={d.dueAt} />{' '}
                      <StatusBadge status={d.state} />
                    </li>
                  ))}
                </ul>
              )}
            </Section>
            <Section title="Decision timeouts">
              {data.nextDecisionTimeouts.length === 0 ? (
                <p class="muted">No question has a timeout.</p>
              ) : (
                <ul class="rows">
                  {data.nextDecisionTimeouts.map((d) => (
                    <li key={d.runId}>
                      <RunLink run={d} /> policy answers <b>{d.policyAnswer.choice}</b>{' '}
                      {d.timeoutAt !== null && <Countdown at={d.timeoutAt} />}
                    </li>
                  ))}
                </ul>
              )}
            </Section>
            <Section title="Recent failures">
              {data.recentFailures.length === 0 ? (
                <p class="muted">None.</p>
              ) : (
                <ul class="rows">
                  {data.recentFailures.map((r) => (
                    <li key={r.id}>
                      <RunLink run={r} /> {r.name} <span class="muted">{r.error?.message}</span>
                    </li>
                  ))}
                </ul>
              )}
            </Section>
            <Section title="Workers">
              {data.workers.length === 0 ? (
                <p class="muted">No worker is registered.</p>
              ) : (
                <table>
                  <caption class="sr-only">Workers with their leases and heartbeats</caption>
                  <thead>
                    <tr>
                      <th scope="col">Worker</th>
                      <th scope="col">Host / pid</th>
                      <th scope="col">Heartbeat</th>
                      <th scope="col">Leases</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.workers.map((w) => (
                      <tr key={w.id}>
                        <td class="mono">{w.id}</td>
                        <td>
                          {w.host} / {w.pid}
                        </td>
                        <td>{formatDuration(Math.max(0, tick.value - w.heartbeatAt))} ago</td>
                        <td>
                          {w.leases.length === 0
                            ? 'none'
                            : w.leases.map((l) => (
                                <div key={l.runId}>
                                  <RunLink run={{ id: l.runId, rootId: l.runId }} />{' '}
                                  {l.leaseExpiresAt !== null && (
                                    <Countdown at={l.leaseExpiresAt} label="expires" />
                                  )}
                                </div>
                              ))}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </Section>
            <Section title="Store">
              <p>
                {data.store.dialect}: <StatusBadge status={data.store.ok ? 'succeeded' : 'failed'} /> answered
                in {formatDuration(data.store.answeredInMs)}
              </p>
            </Section>
          </div>
        </>
      )}
    </main>
  );
}
