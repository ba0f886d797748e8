/**
 * Property (issue 11, "keep it found"): any body — any JSON, any bytes, any content type — sent to
 * any POST route of the HTTP API is answered 2xx or 4xx with the error shape and a typed code,
 * never 500 and never a crash; and a refusal changes nothing stored (every table of the SQLite file
 * is dumped before and after and compared).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../core/index.ts';
import { defineTask } from '../runtime/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { createHttpHandler, type HttpHandler } from './create-http-handler.ts';
import { drive } from './fixtures/agent-jobs.ts';
import { HttpCodes } from './wire-errors.ts';

let rt: TestRuntime;
let handler: HttpHandler;
const TYPED = new Set<string>([...ErrorCodes, ...Object.values(HttpCodes)]);

const double = defineTask({ name: 'double', run: async (input: { n: number }) => input.n * 2 });
const waiter = defineTask({
  name: 'waiter',
  run: async (_: unknown, ctx) => ctx.waitFor('go'),
});

beforeAll(async () => {
  // No worker: nothing changes the store between two requests but the requests themselves.
  rt = testRuntime({ worker: false });
  rt.baton.register(double, waiter);
  handler = createHttpHandler(rt.baton, { maxSyncWaitMs: 1_000, bodyLimitBytes: 4_096 });
  await rt.baton.start(double, { n: 1 }, { id: 'queued-1' });
  await rt.baton.start(waiter, {}, { id: 'queued-2' });
  await rt.baton.cancel('queued-2', 'fixture');
});

afterAll(async () => {
  handler.close();
  await rt.dispose();
});

/** Every row of every table, in a stable order: what "the store unchanged" means. */
function dump(): string {
  const db = rt.store.database;
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as Array<{ name: string }>;
  return JSON.stringify(
    tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY 1, 2`).raw().all()]),
  );
}

const ids = fc.oneof(
  fc.constantFrom('queued-1', 'queued-2', 'missing', '..', '%2e%2e', 'a/b'),
  fc.string({ minLength: 1, maxLength: 12 }),
);
const route = fc.oneof(
  fc.constantFrom('/runs', '/bulk/cancel', '/bulk/resume'),
  ids.map((id) => `/runs/${encodeURIComponent(id)}/resume`),
  ids.map((id) => `/runs/${encodeURIComponent(id)}/resume?mode=async`),
  ids.map((id) => `/runs/${encodeURIComponent(id)}/decisions`),
  ids.map((id) => `/runs/${encodeURIComponent(id)}/cancel`),
  fc
    .tuple(ids, fc.string({ minLength: 1, maxLength: 8 }))
    .map(([id, name]) => `/runs/${encodeURIComponent(id)}/signals/${encodeURIComponent(name)}`),
);
/** Bodies near the schemas (so deep validation is reached), anything JSON, and raw bytes. */
const shaped = fc.record(
  {
    task: fc.oneof(fc.constantFrom('double', 'waiter', 'nope'), fc.anything()),
    flow: fc.oneof(
      fc.record({ steps: fc.array(fc.record({ id: fc.string(), task: fc.constantFrom('double', 'x') })) }),
      fc.anything(),
    ),
    input: fc.anything(),
    mode: fc.oneof(fc.constantFrom('sync', 'async'), fc.anything()),
    id: fc.oneof(fc.string({ maxLength: 8 }), fc.anything()),
    budget: fc.oneof(fc.constantFrom('5s', '0s', 1.5, 1e20, '99999999999999999999h', -1), fc.anything()),
    timeoutMs: fc.oneof(fc.integer({ min: -1, max: 2_000 }), fc.anything()),
    resumeJobId: fc.oneof(fc.constantFrom('queued-1', 'queued-2', 'missing'), fc.anything()),
    ids: fc.oneof(fc.array(ids, { maxLength: 3 }), fc.anything()),
    filter: fc.oneof(fc.record({ status: fc.constantFrom('queued', 'cancelled', 'bogus') }), fc.anything()),
    dryRun: fc.anything(),
    reason: fc.oneof(fc.string(), fc.anything()),
    answer: fc.anything(),
    payload: fc.anything(),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  shaped.map((v) => ({ text: JSON.stringify(v), type: 'application/json' })),
  fc.jsonValue().map((v) => ({ text: JSON.stringify(v), type: 'application/json' })),
  fc.string().map((s) => ({ text: s, type: 'application/json' })),
  fc.uint8Array({ maxLength: 64 }).map((b) => ({ text: b, type: 'application/json' })),
  fc
    .tuple(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('text/plain', '', 'application/x-www-form-urlencoded'),
    )
    .map(([text, type]) => ({ text, type })),
  fc.constant({ text: 'x'.repeat(5_000), type: 'application/json' }),
);

const json = (v: unknown) => ({ text: JSON.stringify(v), type: 'application/json' });
/** Requests each route accepts, with a random part, so accepted paths are exercised too. */
const valid = fc.oneof(
  fc
    .record({ n: fc.integer(), mode: fc.constantFrom('async', 'sync'), id: fc.uuid() })
    .map(
      ({ n, mode, id }) => ['/runs', json({ task: 'double', input: { n }, mode, id, budget: '1m' })] as const,
    ),
  fc
    .record({ dryRun: fc.boolean(), ids: fc.array(ids, { maxLength: 3 }) })
    .chain((b) => fc.constantFrom('/bulk/cancel', '/bulk/resume').map((r) => [r, json(b)] as const)),
  fc
    .tuple(ids, fc.string({ maxLength: 20 }))
    .map(([id, reason]) => [`/runs/${encodeURIComponent(id)}/cancel`, json({ reason })] as const),
  ids.map((id) => [`/runs/${encodeURIComponent(id)}/resume?mode=async`, json({})] as const),
);

describe('property: every POST body is a 2xx or a typed 4xx, and a refusal stores nothing', () => {
  it('holds for any route and body', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.tuple(route, body), fc.tuple(route, body), valid),
        async ([path, { text, type }]) => {
          const before = dump();
          const request = new Request(`http://localhost${path}`, {
            method: 'POST',
            body: text,
            headers: type ? { 'content-type': type } : {},
          });
          // A sync start waits on the manual clock (at most maxSyncWaitMs): move it while waiting.
          const response = await drive(rt.clock, handler(request), 250);
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          expect(response.status, `${path} ${String(text).slice(0, 200)}`).toBeLessThan(500);
          if (response.status < 400) return;
          const answer = (await response.json()) as { success: boolean; error: string; message: string };
          expect(answer.success).toBe(false);
          expect(TYPED.has(answer.error) || /_timeout$/.test(answer.error), answer.error).toBe(true);
          expect(answer.message.length).toBeGreaterThan(0);
          // 408 is the protocol's "still running": the run was created; anything else refused.
          if (response.status !== 408) expect(dump()).toBe(before);
        },
      ),
      { numRuns: 400 },
    );
    // Both sides were exercised: some requests were accepted, most were refused.
    const count = (ok: (s: number) => boolean) =>
      [...statuses].filter(([s]) => ok(s)).reduce((n, [, c]) => n + c, 0);
    expect(count((s) => s < 400)).toBeGreaterThan(0);
    expect(count((s) => s >= 400 && s !== 408)).toBeGreaterThan(100);
  });
});
