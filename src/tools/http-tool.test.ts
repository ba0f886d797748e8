import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatonError, type ErrorCode } from '../core/index.ts';
import type { TaskContext } from '../runtime/index.ts';
import { SCHEDULE_JSON_SCHEMA } from '../schedule/index.ts';
import { ManualClock } from '../time/index.ts';
import { defineTool, httpToolHandler } from './index.ts';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A real tool server on a loopback port; `respond` decides each answer (or holds it). */
let server: Server;
let base: string;
let received: Received[];
let respond: (req: Received, res: ServerResponse) => void;
let arrived: () => void;
let arrival: Promise<void>;

beforeEach(async () => {
  received = [];
  arrival = new Promise((r) => {
    arrived = r;
  });
  respond = (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true, echo: req.body }));
  };
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    req.on('end', () => {
      const r = { method: req.method, url: req.url, headers: req.headers, body: JSON.parse(text) as unknown };
      received.push(r);
      arrived();
      respond(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function context(signal = new AbortController().signal, clock = new ManualClock(0)): TaskContext {
  return { signal, clock } as unknown as TaskContext;
}

async function rejection(p: Promise<unknown>, code: ErrorCode): Promise<BatonError> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof BatonError)) throw err;
    expect(err.code, err.message).toBe(code);
    return err;
  }
  throw new Error('expected a rejection');
}

describe('httpToolHandler', () => {
  it('posts the arguments as JSON, never the schedule, and returns the answer', async () => {
    const draw = defineTool({
      name: 'image_draw',
      inputSchema: {
        type: 'object',
        properties: { prompt: { type: 'string' }, schedule: SCHEDULE_JSON_SCHEMA },
      },
      handler: httpToolHandler({
        url: `${base}/tools/image_draw?key=secret`,
        headers: { authorization: 'Bearer t' },
      }),
    });
    const out = await draw.run(
      { prompt: '1girl', schedule: { when: 'in 5 minutes', timezone: 'Asia/Shanghai' } },
      context(),
    );
    expect(out).toEqual({ ok: true, echo: { prompt: '1girl' } });
    // Used on its own, the handler removes schedule as well.
    const bare = httpToolHandler({ url: `${base}/bare` });
    await bare({ prompt: 'x', schedule: '2分钟后' }, context());
    expect(received.map((r) => r.body)).toEqual([{ prompt: '1girl' }, { prompt: 'x' }]);
    expect(JSON.stringify(received)).not.toContain('schedule');
    expect(received[0]).toMatchObject({
      method: 'POST',
      url: '/tools/image_draw?key=secret',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
    });
  });

  it('fails with TASK_FAILED and the status on a non-2xx answer, without the query in the message', async () => {
    respond = (_req, res) => {
      res.statusCode = 503;
      res.end('{"error":"busy"}');
    };
    const handler = httpToolHandler({ url: `${base}/t?key=secret` });
    const err = await rejection(handler({ a: 1 }, context()), 'TASK_FAILED');
    expect(err.data).toEqual({ status: 503, body: '{"error":"busy"}' });
    expect(err.message).toBe(`tool server ${base}/t answered 503 Service Unavailable`);
    expect(err.message).not.toContain('secret');
  });

  it('fails with TASK_FAILED on an answer that is not JSON, and gives null for an empty one', async () => {
    respond = (_req, res) => res.end('<html>oops</html>');
    const handler = httpToolHandler({ url: base });
    expect((await rejection(handler({}, context()), 'TASK_FAILED')).message).toContain('not JSON');
    respond = (_req, res) => {
      res.statusCode = 204;
      res.end();
    };
    expect(await handler({}, context())).toBe(null);
  });

  it('fails with TASK_FAILED when the server cannot be reached', async () => {
    const handler = httpToolHandler({ url: base });
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    const err = await rejection(handler({}, context()), 'TASK_FAILED');
    expect(err.message).toContain('could not be reached');
    server = createServer();
    server.listen(0, '127.0.0.1');
  });

  it('gives up when the attempt’s signal fires, with the signal’s reason', async () => {
    respond = () => undefined;
    const controller = new AbortController();
    const call = httpToolHandler({ url: base })({ a: 1 }, context(controller.signal));
    await arrival;
    const reason = new BatonError('TIMEOUT', 'attempt timed out after 60000 ms');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });

  it('gives up after its own timeoutMs on the task’s clock', async () => {
    respond = () => undefined;
    const clock = new ManualClock(0);
    const call = httpToolHandler({ url: `${base}/slow`, timeoutMs: 5_000 })({}, context(undefined, clock));
    await arrival;
    await clock.advance(4_999);
    expect(received).toHaveLength(1);
    const settled = rejection(call, 'TIMEOUT');
    await clock.advance(1);
    expect((await settled).message).toBe(`tool server ${base}/slow did not answer within 5000 ms`);
  });

  it('refuses bad options when the handler is made', () => {
    for (const [options, field] of [
      [{ url: 'not a url' }, 'url'],
      [{ url: 'file:///etc/passwd' }, 'url'],
      [{ url: base, timeoutMs: 0 }, 'timeoutMs'],
      [{ url: base, headers: { a: 1 } }, 'headers'],
    ] as const) {
      try {
        httpToolHandler(options as never);
        expect.unreachable(field);
      } catch (err) {
        expect((err as BatonError).code).toBe('INVALID_OPTION');
        expect((err as Error).message.startsWith(`${field} must be`)).toBe(true);
      }
    }
  });
});
