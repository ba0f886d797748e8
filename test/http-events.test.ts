/**
 * A run's events as server-sent events over real HTTP: the whole log then the end of the stream,
 * `Last-Event-ID` replaying only what was missed, heartbeat comments on an idle followed stream,
 * and the client's iterator reconnecting after a dropped connection without gaps or repeats.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, SseParser } from '../src/client/index.ts';
import type { BatonEvent } from '../src/core/index.ts';
import { agentJob, drive, evenScript } from '../src/http/fixtures/agent-jobs.ts';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type TestRuntime, testRuntime } from '../src/testing/index.ts';

let rt: TestRuntime;
let server: HttpServer;
afterEach(async () => {
  await server?.close();
  await rt?.dispose();
});

/** A finished 3-turn agent job (its log has a dozen events or more). */
async function finishedJob(): Promise<string> {
  rt = testRuntime();
  rt.baton.register(agentJob(rt.clock, evenScript(3, 1_000)).task);
  server = await serveHttp(rt.baton, { heartbeatMs: 15_000 });
  const r = await drive(
    rt.clock,
    fetch(`${server.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"task":"insights"}',
    }),
  );
  expect(r.status).toBe(200);
  return ((await r.json()) as { metadata: { jobId: string } }).metadata.jobId;
}

/** Reads an SSE response to its end: the parsed messages and the comment count. */
async function readAll(response: Response) {
  const parser = new SseParser();
  const messages = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body as AsyncIterable<Uint8Array>)
    messages.push(...parser.feed(decoder.decode(chunk, { stream: true })));
  return { messages, parser };
}

describe('GET /runs/:id/events', () => {
  it('streams every event with id, type and JSON data, then ends after the terminal event', async () => {
    const id = await finishedJob();
    const response = await fetch(`${server.url}/runs/${id}/events`);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const { messages, parser } = await readAll(response);
    const stored = await rt.store.readEvents({ runId: id, limit: 1000 });
    expect(messages.map((m) => m.event)).toEqual(stored.map((e) => e.type));
    expect(messages.map((m) => JSON.parse(m.data) as BatonEvent)).toEqual(stored);
    expect(messages.at(-1)?.event).toBe('run:succeeded');
    expect(parser.lastEventId).toBe(String(stored.at(-1)?.id));
    expect(parser.retryMs).toBe(2_000);
  });

  it('replays only what was missed after Last-Event-ID', async () => {
    const id = await finishedJob();
    const stored = await rt.store.readEvents({ runId: id, limit: 1000 });
    const seen = stored[4] as BatonEvent;
    const response = await fetch(`${server.url}/runs/${id}/events`, {
      headers: { 'last-event-id': String(seen.id) },
    });
    const { messages } = await readAll(response);
    expect(messages.map((m) => Number((JSON.parse(m.data) as BatonEvent).id))).toEqual(
      stored.slice(5).map((e) => e.id),
    );
  });

  it('keeps a followed stream open with a heartbeat comment every 15 s, and lets go when the client leaves', async () => {
    const id = await finishedJob();
    await rt.clock.advance(1_000);
    const idleTimers = rt.clock.pendingTimers;
    const stop = new AbortController();
    const response = await fetch(`${server.url}/runs/${id}/events?follow=1`, { signal: stop.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const readUntil = async (done: () => boolean) => {
      while (!done()) {
        const chunk = await drive(rt.clock, reader.read(), 1_000);
        if (chunk.done) throw new Error('stream ended');
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
    };
    const stored = await rt.store.readEvents({ runId: id, limit: 1000 });
    await readUntil(() => parser.lastEventId === String(stored.at(-1)?.id));
    const before = parser.comments;
    await readUntil(() => parser.comments >= before + 2);
    expect(parser.comments - before).toBeGreaterThanOrEqual(2);
    expect(rt.clock.pendingTimers).toBeGreaterThan(idleTimers);
    stop.abort();
    await reader.cancel().catch(() => undefined);
    // The server stops following (its heartbeat and poll timers are gone) once the socket closes.
    for (let i = 0; i < 50 && rt.clock.pendingTimers > idleTimers; i++) await rt.clock.advance(300);
    expect(rt.clock.pendingTimers).toBe(idleTimers);
  });
});

describe('client.events', () => {
  it('iterates the events and reconnects with Last-Event-ID after a dropped connection', async () => {
    const id = await finishedJob();
    const stored = await rt.store.readEvents({ runId: id, limit: 1000 });
    const requests: Array<string | null> = [];
    // The first connection dies after ~3 events: its body errors mid-stream, like a cut cable.
    const flaky: typeof fetch = async (input, init) => {
      requests.push(new Headers(init?.headers).get('last-event-id'));
      const response = await fetch(input, init);
      if (requests.length > 1 || !response.body) return response;
      const source = response.body.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await source.read();
          if (done) return controller.close();
          sent += value.byteLength;
          controller.enqueue(value);
          if (sent > 600) {
            await source.cancel();
            controller.error(new TypeError('terminated'));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const client = createClient({ baseUrl: server.url, fetch: flaky, clock: rt.clock });
    const got: BatonEvent[] = [];
    await drive(
      rt.clock,
      (async () => {
        for await (const e of client.events(id)) got.push(e);
      })(),
      500,
    );
    expect(requests).toHaveLength(2);
    expect(requests[0]).toBeNull();
    expect(Number(requests[1])).toBeGreaterThan(0);
    expect(got).toEqual(stored);
  });

  it('stops when the consumer breaks out of the loop', async () => {
    const id = await finishedJob();
    const client = createClient({ baseUrl: server.url, clock: rt.clock });
    const got: BatonEvent[] = [];
    for await (const e of client.events(id, { follow: true })) {
      got.push(e);
      if (got.length === 2) break;
    }
    expect(got.map((e) => e.type)).toEqual(['run:created', 'run:queued']);
  });
});
