/**
 * `GET /runs/:id/events` as server-sent events: `id:` is the event's store id, `event:` its type,
 * `data:` the event as JSON. A reconnecting client sends `Last-Event-ID` and gets only what it
 * missed. A comment line every `heartbeatMs` keeps proxies from closing an idle stream. The stream
 * ends after the run's terminal event unless `?follow=1`. Written with Hono's `streamSSE`
 * (backpressure: a slow reader slows the writer instead of growing a queue).
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { BatonError, type BatonEvent } from '../core/index.ts';
import type { TimerHandle } from '../time/index.ts';
import type { AllEventsQuery, EventsQuery } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { errorBody } from './wire-errors.ts';

/** How long a disconnected EventSource waits before reconnecting. */
const RETRY_MS = 2_000;

export async function eventsRoute(
  rc: RouteContext,
  c: Context,
  id: string,
  query: EventsQuery,
): Promise<Response> {
  const request = c.req.raw;
  if (!(await rc.baton.getRun(id)))
    throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  const afterId = lastEventId(request) ?? query.after ?? 0;
  const follow = query.follow === '1' || query.follow === 'true';
  return sseResponse(rc, c, `run ${id}`, (signal) =>
    rc.baton.events(id, { afterId, forever: follow, signal }),
  );
}

/**
 * `GET /events`: every run's events, past (after `Last-Event-ID` or `?after=`; by default only
 * new ones) then live, until the client goes. `?types=run:succeeded,decision:requested` keeps
 * only those types (a prefix ending in ":" keeps a family, e.g. `run:`).
 */
export async function allEventsRoute(rc: RouteContext, c: Context, query: AllEventsQuery): Promise<Response> {
  const request = c.req.raw;
  const types = query.types?.split(',').filter((t) => t !== '');
  const keep = (e: BatonEvent) =>
    types === undefined || types.some((t) => (t.endsWith(':') ? e.type.startsWith(t) : e.type === t));
  const afterId = lastEventId(request) ?? query.after ?? (await rc.baton.store.lastEventId());
  return sseResponse(rc, c, 'all runs', async function* (signal) {
    for await (const e of rc.baton.allEvents({ afterId, signal })) if (keep(e)) yield e;
  });
}

function sseResponse(
  rc: RouteContext,
  c: Context,
  label: string,
  source: (signal: AbortSignal) => AsyncIterable<BatonEvent>,
): Response {
  const response = streamSSE(c, async (stream) => {
    const stop = new AbortController();
    let heartbeat: TimerHandle | undefined;
    stream.onAbort(() => {
      stop.abort();
      rc.clock.clearTimer(heartbeat);
    });
    // A client that aborts its request (in-process fetch, a serverless runtime) may never cancel
    // the body: end the stream then too. Over a socket, Hono sees the close as an abort itself.
    const onGone = () => stream.abort();
    c.req.raw.signal?.addEventListener('abort', onGone, { once: true });
    const beat = () => {
      heartbeat = rc.clock.setTimer(rc.options.heartbeatMs, () => {
        if (stream.aborted || stream.closed) return;
        void stream.write(': heartbeat\n\n').then(beat, () => stop.abort());
      });
    };
    try {
      await stream.write(`retry: ${RETRY_MS}\n: stream of ${label}\n\n`);
      beat();
      for await (const e of source(stop.signal)) {
        if (stream.aborted) break;
        // Hono's writeSSE refuses CR/LF in the id and event lines; JSON.stringify escapes line
        // breaks, so the data always fits on one `data:` line.
        await stream.writeSSE({ id: String(e.id), event: e.type, data: JSON.stringify(e) });
      }
    } catch (err) {
      if (!stream.aborted) await stream.writeSSE({ event: 'error', data: JSON.stringify(errorBody(err)) });
    } finally {
      c.req.raw.signal?.removeEventListener('abort', onGone);
      rc.clock.clearTimer(heartbeat);
      stop.abort();
    }
  });
  // streamSSE sets the type without a charset and a plain no-cache; proxies must not buffer or transform.
  response.headers.set('content-type', 'text/event-stream; charset=utf-8');
  response.headers.set('cache-control', 'no-cache, no-transform');
  response.headers.set('x-accel-buffering', 'no');
  return response;
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
