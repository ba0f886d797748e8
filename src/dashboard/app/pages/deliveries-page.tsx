/**
 * Scheduled deliveries: the expression as the user wrote it, the instant it resolved to in the
 * user's zone and in UTC, a countdown, the state (working / held / notified / delivered / late),
 * the in-progress notice and the webhook and callback attempts.
 */
import type { DeliveriesPage as Board } from '../../../client/index.ts';
import type { DeliveryEntry } from '../../../runtime/index.ts';
import { api } from '../api.ts';
import { Countdown, ErrorNote, Loading, RunLink, StatusBadge } from '../components/bits.tsx';
import { formatInZone, formatUtc } from '../model/format.ts';
import { href } from '../router.ts';
import { useLoad } from '../use-load.ts';

export function DeliveriesPage({ params }: { params: URLSearchParams }) {
  const state = params.get('state') === 'all' ? 'all' : 'upcoming';
  const { data, error } = useLoad<Board>(
    () => api.deliveries(state),
    `deliveries-${state}`,
    (events) =>
      events.some(
        (e) => e.type.startsWith('tool:') || e.type.startsWith('delivery:') || e.type === 'run:created',
      ),
  );
  return (
    <main id="main" class="page">
      <h1>Deliveries</h1>
      <nav class="tabs" aria-label="Which deliveries">
        <a href={href('/deliveries')} aria-current={state === 'upcoming' ? 'page' : undefined}>
          Upcoming
        </a>
        <a href={href('/deliveries', { state: 'all' })} aria-current={state === 'all' ? 'page' : undefined}>
          All
        </a>
      </nav>
      <ErrorNote error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          {data.deliveries.length === 0 ? (
            <p class="muted">
              {state === 'upcoming' ? 'No delivery is scheduled.' : 'No scheduled tool call yet.'}
            </p>
          ) : (
            <DeliveryTable
              rows={data.deliveries}
              caption={state === 'upcoming' ? 'Upcoming, soonest first' : 'All, newest first'}
            />
          )}
          {data.recent.length > 0 && (
            <DeliveryTable rows={data.recent} caption="Delivered in the last ten minutes" />
          )}
        </>
      )}
    </main>
  );
}

function DeliveryTable({ rows, caption }: { rows: DeliveryEntry[]; caption: string }) {
  return (
    <div class="table-wrap">
      <table class="deliveries">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Expression</th>
            <th scope="col">Due (user's zone)</th>
            <th scope="col">Due (UTC)</th>
            <th scope="col">Countdown</th>
            <th scope="col">State</th>
            <th scope="col">Channels</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.runId} data-run={d.runId} data-state={d.state}>
              <td>
                <RunLink run={d} />
                <div class="muted">{d.name}</div>
              </td>
              <td lang={d.schedule.language === 'zh' ? 'zh' : 'en'}>“{d.schedule.text}”</td>
              <td>{formatInZone(d.dueAt, d.schedule.timezone)}</td>
              <td>{formatUtc(d.dueAt)}</td>
              <td class="countdown">
                {d.deliveredAt !== null ? (
                  <span>delivered {formatUtc(d.deliveredAt)}</span>
                ) : (
                  <Countdown at={d.dueAt} />
                )}
              </td>
              <td>
                <StatusBadge status={d.state} />
                {d.noticeAt !== null && (
                  <div class="muted">in-progress notice sent {formatUtc(d.noticeAt)}</div>
                )}
              </td>
              <td>
                {d.channels.length === 0 ? (
                  <span class="muted">event stream</span>
                ) : (
                  <ul class="plain">
                    {d.channels.map((c) => (
                      <li key={c.id}>
                        {c.channel} ({c.kind}): {c.status}, {c.attempts} attempt{c.attempts === 1 ? '' : 's'}
                        {c.lastError ? ` — ${c.lastError}` : ''}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
