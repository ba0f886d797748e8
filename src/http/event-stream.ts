/**
 * `GET /runs/:id/events` as server-sent events: `id:` is the event's store id, `event:` its type,
 * `data:` the event as JSON. A reconnecting client sends `Last-Event-ID` and gets only what it
 * missed. A comment line every `heartbeatMs` keeps proxies from closing an idle stream. The stream
 * ends after the run's terminal event unless `?follow=1`.
 */
import { BatonError, type BatonEvent } from '../core/index.ts';
import type { TimerHandle } from '../time/index.ts';
import { AllEventsQuery, EventsQuery, parseRequest, queryOf } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { errorBody } from './wire-errors.ts';

/** How long a disconnected EventSource waits before reconnecting. */
const RETRY_MS = 2_000;

export function formatSseEvent(event: BatonEvent): string {
  // JSON.stringify escapes line breaks, so the data always fits on one `data:` line.
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export async function eventsRoute(rc: RouteContext, request: Request, id: string): Promise<Response> {
  const query = parseRequest(EventsQuery, queryOf(new URL(request.url)), 'query');
  if (!(await rc.baton.getRun(id)))
    throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  const afterId = lastEventId(request) ?? query.after ?? 0;
  const follow = query.follow === '1' || query.follow === 'true';
  return sseResponse(rc, request, `run ${id}`, (signal) =>
    rc.baton.events(id, { afterId, forever: follow, signal }),
  );
}

/**
 * `GET /events`: every run's events, past (after `Last-Event-ID` or `?after=`; by default only
 * new ones) then live, until the client goes. `?types=run:succeeded,decision:requested` keeps
 * only those types (a prefix ending in ":" keeps a family, e.g. `run:`).
 */
export async function allEventsRoute(rc: RouteContext, request: Request): Promise<Response> {
  const query = parseRequest(AllEventsQuery, queryOf(new URL(request.url)), 'query');
  const types = query.types?.split(',').filter((t) => t !== '');
  const keep = (e: BatonEvent) =>
    types === undefined || types.some((t) => (t.endsWith(':') ? e.type.startsWith(t) : e.type === t));
  const afterId = lastEventId(request) ?? query.after ?? (await rc.baton.store.lastEventId());
  return sseResponse(rc, request, 'all runs', async function* (signal) {
    for await (const e of rc.baton.allEvents({ afterId, signal })) if (keep(e)) yield e;
  });
}

function sseResponse(
  rc: RouteContext,
  request: Request,
  label: string,
  source: (signal: AbortSignal) => AsyncIterable<BatonEvent>,
): Response {
  const stop = new AbortController();
  const onGone = () => stop.abort();
  request.signal?.addEventListener('abort', onGone, { once: true });
  const encoder = new TextEncoder();
  const clock = rc.clock;
  let heartbeat: TimerHandle | undefined;
  let open = true;

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          open = false;
        }
      };
      const beat = () => {
        heartbeat = clock.setTimer(rc.options.heartbeatMs, () => {
          send(': heartbeat\n\n');
          if (open) beat();
        });
      };
      const finish = () => {
        clock.clearTimer(heartbeat);
        request.signal?.removeEventListener('abort', onGone);
        if (!open) return;
        open = false;
        try {
          controller.close();
        } catch {
          // Already cancelled by the client.
        }
      };
      send(`retry: ${RETRY_MS}\n: stream of ${label}\n\n`);
      beat();
      void (async () => {
        try {
          for await (const e of source(stop.signal)) {
            send(formatSseEvent(e));
            if (!open) break;
          }
        } catch (err) {
          send(`event: error\ndata: ${JSON.stringify(errorBody(err))}\n\n`);
        } finally {
          finish();
        }
      })();
    },
    cancel() {
      open = false;
      stop.abort();
      clock.clearTimer(heartbeat);
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    },
  });
}

/** `Last-Event-ID` as a number; a value that is not one is a 400 naming the header. */
function lastEventId(request: Request): number | undefined {
  const raw = request.headers.get('last-event-id');
  if (raw === null || raw.trim() === '') return undefined;
  if (!/^\d+$/.test(raw.trim()))
    throw new BatonError(
      'INVALID_INPUT',
      `Last-Event-ID must be an event id (a non-negative integer), got ${JSON.stringify(raw.slice(0, 40))}`,
      {
        data: { field: 'header.Last-Event-ID' },
      },
    );
  return Number(raw.trim());
}
