/**
 * A run's events over SSE as an async iterable. If the connection drops mid-stream, it reconnects
 * with `Last-Event-ID` (after the server's `retry:` delay) and continues without gaps or repeats.
 * A stream the server closes cleanly is finished (the run ended, or `follow` was stopped).
 */
import type { BatonEvent } from '../core/index.ts';
import type { Clock } from '../time/index.ts';
import { BatonHttpError, errorFromResponse } from './http-error.ts';
import { SseParser } from './sse-parser.ts';

export interface EventsOptions {
  /** Start after this event id. @default 0 (from the first event) */
  afterId?: number;
  /** Keep streaming after the run ends, until `signal` aborts. @default false */
  follow?: boolean;
  signal?: AbortSignal;
  /** Reconnections in a row without receiving an event before giving up. @default 5 */
  maxReconnects?: number;
  /** Delay before a reconnect when the server sent no `retry:`. @default 1000 */
  reconnectDelayMs?: number;
}

export interface EventsTransport {
  url(path: string): string;
  fetch: typeof fetch;
  headers(extra?: Record<string, string>): Record<string, string>;
  clock: Clock;
}

/** A run's events (`id`), or every run's (`null`: `GET /events`, which always follows). */
export async function* followEvents(
  t: EventsTransport,
  id: string | null,
  options: EventsOptions & { query?: Record<string, string> } = {},
): AsyncGenerator<BatonEvent> {
  let lastId = options.afterId ?? 0;
  let failures = 0;
  const maxReconnects = options.maxReconnects ?? 5;
  let retryMs = options.reconnectDelayMs ?? 1_000;
  const params = new URLSearchParams(options.query);
  if (id !== null && options.follow) params.set('follow', '1');
  // The global stream starts with what happens next unless told where to start.
  if (id === null && options.afterId !== undefined) params.set('after', String(options.afterId));
  const qs = params.toString();
  const path = `${id === null ? '/events' : `/runs/${encodeURIComponent(id)}/events`}${qs ? `?${qs}` : ''}`;
  for (;;) {
    if (options.signal?.aborted) return;
    const connection = new AbortController();
    const onAbort = () => connection.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      let response: Response;
      try {
        response = await t.fetch(t.url(path), {
          headers: t.headers({
            accept: 'text/event-stream',
            ...(lastId > 0 ? { 'last-event-id': String(lastId) } : {}),
          }),
          signal: connection.signal,
        });
      } catch (err) {
        if (options.signal?.aborted) return;
        if (++failures > maxReconnects) throw err;
        await t.clock.sleep(retryMs, options.signal).catch(() => undefined);
        continue;
      }
      if (!response.ok || !response.body) throw await errorFromResponse(response);
      const parser = new SseParser();
      const decoder = new TextDecoder();
      reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          for (const m of parser.feed(decoder.decode(value, { stream: true }))) {
            if (m.event === 'error') throw streamError(m.data);
            const event = JSON.parse(m.data) as BatonEvent;
            lastId = event.id;
            failures = 0;
            yield event;
          }
          if (parser.retryMs !== undefined) retryMs = parser.retryMs;
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        if (err instanceof BatonHttpError || err instanceof SyntaxError) throw err;
        // The connection dropped mid-stream: reconnect from the last event received.
        if (++failures > maxReconnects) throw err;
        await t.clock.sleep(retryMs, options.signal).catch(() => undefined);
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      connection.abort();
      await reader?.cancel().catch(() => undefined);
    }
  }
}

function streamError(data: string): BatonHttpError {
  try {
    const body = JSON.parse(data) as { error?: string; message?: string; details?: Record<string, unknown> };
    return new BatonHttpError(
      200,
      body.error ?? 'UNKNOWN',
      body.message ?? 'event stream failed',
      body.details,
    );
  } catch {
    return new BatonHttpError(200, 'UNKNOWN', `event stream failed: ${data.slice(0, 200)}`);
  }
}
