/**
 * The API the dashboard reads (and any client may): a run's timeline in one request, the runs list's
 * filters, the decisions inbox with the policy's answer and a lost race naming the winner, scheduled
 * deliveries, the overview, bulk cancel / resume with a dry-run count, and the store-wide SSE stream —
 * through the handler and through the typed client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../client/index.ts';
import type { BatonEvent } from '../core/index.ts';
import { defineTask, type TaskContext } from '../runtime/index.ts';
import { advanceUntil, eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTool } from '../tools/index.ts';
import { createHttpHandler, type HttpHandler } from './create-http-handler.ts';

let rt: TestRuntime | undefined;
let handler: HttpHandler | undefined;
afterEach(async () => {
  handler?.close();
  await rt?.dispose();
  rt = undefined;
});

const HOUR = 3_600_000;

async function findOneThenStall(ctx: TaskContext): Promise<never> {
  await ctx.partial({ finding: `clue ${ctx.attempt}` });
  await ctx.delay(10 * HOUR);
  throw new Error('unreachable');
}

const asker = defineTask({
  name: 'asker',
  research: { mode: 'codebase' },
  retry: { acceptPartial: true },
  escalation: { ask: true, decisionTimeout: '10m' },
  run: (_: unknown, ctx) => (ctx.attempt < 2 ? findOneThenStall(ctx) : Promise.resolve('found it')),
});

const worker = defineTask({
  name: 'worker',
  budget: '20m',
  timeout: '5m',
  run: async (_: unknown, ctx) => {
    for (let i = 0; i < 4; i++) {
      await ctx.step(`item-${i}`, async () => ({ i }));
      await ctx.partial({ item: i });
      if (i % 2 === 1) await ctx.checkpoint({ next: i + 1 }, { itemsAnalyzed: i + 1, itemsTotal: 4 });
    }
    await ctx.delay(HOUR);
    return 'done';
  },
});

const sleeper = defineTask({ name: 'sleeper', timeout: '1h', run: (_: unknown, ctx) => ctx.delay(HOUR) });

const draw = defineTool({
  name: 'image_draw',
  inputSchema: {
    type: 'object',
    properties: { prompt: { type: 'string' }, schedule: { type: 'string' } },
    required: ['prompt'],
  },
  handler: async (args: { prompt: string }, ctx) => {
    await ctx.delay(10_000);
    return { image: args.prompt };
  },
});

function setup() {
  rt = testRuntime();
  rt.baton.register(asker, worker, sleeper, draw);
  handler = createHttpHandler(rt.baton);
  const h = handler;
  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const r = await h(
      new Request(`http://baton.test${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      }),
    );
    return { status: r.status, body: (await r.json()) as T };
  };
  const client = createClient({
    baseUrl: 'http://baton.test',
    fetch: (url, init) => h(new Request(url as string, init)),
  });
  return { rt, call, client };
}

describe('GET /runs/:id/timeline', () => {
  it('has the run with its budget thresholds and retry plan, events counted and filtered, checkpoints, partials and memoized steps', async () => {
    const { rt, call, client } = setup();
    const run = await rt.baton.start(worker, {});
    await eventOf(rt, 'checkpoint:saved', run.id, 2);
    const t = await client.timeline(run.id);
    expect(t.run.id).toBe(run.id);
    expect(t.run.insight.mode).toBe('normal');
    expect(t.run.insight.budget).toMatchObject({
      budgetMs: 1_200_000,
      remainingMs: 1_200_000,
      status: 'on_track',
      warningBelowMs: 600_000,
      criticalBelowMs: 300_000,
    });
    expect(t.run.insight.attempts).toEqual({
      maxAttempts: 3,
      timeoutsMs: [300_000, 600_000, 900_000],
      backoffMs: [5_000, 15_000],
    });
    expect(t.eventCounts['checkpoint:saved']).toBe(2);
    expect(t.eventCounts['partial:recorded']).toBe(4);
    expect(t.checkpoints.map((c) => [c.seq, c.invalid, (c.state as { next: number }).next])).toEqual([
      [1, null, 2],
      [2, null, 4],
    ]);
    expect(t.checkpoints[1]?.record.progress_percentage).toBe(100);
    expect(t.partials.flatMap((p) => p.findings)).toEqual([
      { item: 0 },
      { item: 1 },
      { item: 2 },
      { item: 3 },
    ]);
    expect(t.memo.map((m) => m.key)).toEqual(['item-0', 'item-1', 'item-2', 'item-3']);
    expect(t.truncated).toBe(false);

    const only = await client.timeline(run.id, { types: ['checkpoint:', 'attempt:started'] });
    expect(new Set(only.events.map((e) => e.type))).toEqual(new Set(['checkpoint:saved', 'attempt:started']));
    expect(only.eventCounts).toEqual(t.eventCounts);

    const cut = await client.timeline(run.id, { limit: 3 });
    expect(cut.events).toHaveLength(3);
    expect(cut.truncated).toBe(true);

    // 15 minutes in, 5 of 20 left: under 600 s (warning); 2 minutes later under 300 s (critical).
    await rt.clock.advance(15 * 60_000);
    const late = await client.get(run.id);
    expect(late.run.insight.budget?.status).toBe('warning');
    await rt.clock.advance(2 * 60_000);
    const critical = await client.get(run.id);
    expect(critical.run.insight.budget?.status).toBe('time_critical');
    expect(critical.run.insight.mode).toBe('accelerate');

    const missing = await call('GET', '/runs/nope/timeline');
    expect(missing.status).toBe(404);
    const bad = await call('GET', `/runs/${run.id}/timeline?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.details).toMatchObject({ field: 'query.limit' });
  });
});

describe('GET /runs filters', () => {
  it('filters by wait reason, budget status and creation time, and names a bad field', async () => {
    const { rt, call, client } = setup();
    const a = await rt.baton.start(worker, {});
    await eventOf(rt, 'attempt:started', a.id);
    await rt.clock.advance(60_000);
    const b = await rt.baton.start(sleeper, {});
    await eventOf(rt, 'attempt:started', b.id);
    const asked = await rt.baton.start(asker, {});
    await eventOf(rt, 'attempt:started', asked.id);
    await rt.clock.advance(60_000);
    await eventOf(rt, 'decision:requested', asked.id);

    const waiting = await client.list({ waitReason: 'decision' });
    expect(waiting.runs.map((r) => r.id)).toEqual([asked.id]);
    const since = await client.list({ createdAfter: new Date(rt.clock.now() - 60_000).toISOString() });
    expect(since.runs.map((r) => r.id).sort()).toEqual([b.id, asked.id].sort());
    await rt.clock.advance(16 * 60_000);
    const atRisk = await client.list({ budgetStatus: 'time_critical' });
    expect(atRisk.runs.map((r) => r.id)).toEqual([a.id]);
    const paged = await client.list({ limit: 2 });
    expect(paged.runs).toHaveLength(2);
    const rest = await client.list({ limit: 2, cursor: paged.nextCursor as string });
    expect(rest.runs).toHaveLength(1);

    const bad = await call('GET', '/runs?budgetStatus=late');
    expect(bad.status).toBe(400);
    expect(bad.body.details).toMatchObject({ field: 'query.budgetStatus' });
    const badTime = await call('GET', '/runs?createdAfter=yesterday');
    expect(badTime.status).toBe(400);
    expect(String(badTime.body.message)).toContain('query.createdAfter');
  });
});

describe('GET /decisions and answering', () => {
  it("lists the open question with its findings, timeout and the policy's answer; a lost race names who answered", async () => {
    const { rt, call, client } = setup();
    const run = await rt.baton.start(asker, {});
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(60_000);
    await eventOf(rt, 'decision:requested', run.id);
    const inbox = await client.decisions();
    expect(inbox.decisions).toHaveLength(1);
    const d = inbox.decisions[0];
    expect(d).toMatchObject({
      runId: run.id,
      name: 'asker',
      askedAt: inbox.now,
      timeoutAt: inbox.now + 600_000,
      policyAnswer: { choice: 'continue_partial' },
      findings: [{ finding: 'clue 1' }],
      findingsTotal: 1,
    });
    expect(d?.request.choices.map((c) => c.id)).toContain('retry_extended');

    const first = await call('POST', `/runs/${run.id}/decisions`, { choice: 'retry_extended' });
    expect(first.status).toBe(200);
    const second = await call('POST', `/runs/${run.id}/decisions`, { choice: 'abandon' });
    expect(second.status).toBe(409);
    expect(second.body.details).toMatchObject({ answeredBy: 'http', answer: { choice: 'retry_extended' } });
    expect(String(second.body.message)).toContain('already answered by http');
    expect((await client.decisions()).decisions).toEqual([]);
    await eventOf(rt, 'run:succeeded', run.id);
  });
});

describe('GET /deliveries', () => {
  it('shows a held result with its expression and instant, then delivered', async () => {
    const { rt, client } = setup();
    const run = await rt.baton.start(draw, { prompt: 'a cat', schedule: 'in 2 minutes' });
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(run.id))?.waitReason === 'delivery', {
      stepMs: 1_000,
    });
    const upcoming = await client.deliveries();
    expect(upcoming.deliveries).toHaveLength(1);
    expect(upcoming.deliveries[0]).toMatchObject({
      runId: run.id,
      state: 'held',
      dueAt: rt.clock.now() + 110_000,
      schedule: { text: 'in 2 minutes', timezone: expect.any(String) },
    });
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(run.id))?.status === 'succeeded');
    expect((await client.deliveries()).deliveries).toEqual([]);
    const all = await client.deliveries({ state: 'all' });
    expect(all.deliveries[0]).toMatchObject({
      runId: run.id,
      state: 'delivered',
      deliveredAt: expect.any(Number),
    });
  });
});

describe('GET /overview', () => {
  it('counts, at-risk runs, open decisions, workers with their leases', async () => {
    const { rt, client } = setup();
    const a = await rt.baton.start(worker, {});
    await eventOf(rt, 'attempt:started', a.id);
    await rt.clock.advance(17 * 60_000);
    const o = await client.overview();
    expect(o.counts.running).toBe(1);
    expect(o.atRisk.map((r) => [r.id, r.insight.budget?.status])).toEqual([[a.id, 'time_critical']]);
    expect(o.workers).toHaveLength(1);
    expect(o.workers[0]?.leases.map((l) => l.runId)).toEqual([a.id]);
    expect(o.store.ok).toBe(true);
  });
});

describe('bulk cancel and resume', () => {
  it('counts before it acts, then acts on exactly those; by ids or by filter', async () => {
    const { rt, call, client } = setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await rt.baton.start(sleeper, {})).id);
    const done = await rt.baton.start(defineTask({ name: 'quick', run: async () => 1 }), {});
    await done.result();

    const dry = await client.bulkCancel({ filter: { name: 'sleeper' }, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, matched: 5, eligible: 5, capped: false });
    expect(await rt.baton.listRuns({ status: 'cancelled' })).toEqual([]);

    const all = await client.bulkCancel({ filter: {}, dryRun: true });
    expect(all).toMatchObject({ matched: 6, eligible: 5 });

    const cancelled = await client.bulkCancel({ filter: { name: 'sleeper' } });
    expect(cancelled).toMatchObject({ dryRun: false, eligible: 5, done: 5, skipped: [] });
    expect((await rt.baton.listRuns({ status: 'cancelled' })).map((r) => r.id).sort()).toEqual(
      [...ids].sort(),
    );

    const resumeDry = await client.bulkResume({ ids: [...ids.slice(0, 2), 'run_missing'], dryRun: true });
    expect(resumeDry).toMatchObject({ matched: 2, eligible: 2, notFound: ['run_missing'] });
    const resumed = await client.bulkResume({ ids: ids.slice(0, 2) });
    expect(resumed).toMatchObject({ done: 2 });
    for (const id of ids.slice(0, 2)) expect((await rt.baton.getRun(id))?.status).not.toBe('cancelled');

    const neither = await call('POST', '/bulk/cancel', { dryRun: true });
    expect(neither.status).toBe(400);
    expect(neither.body.details).toMatchObject({ field: 'body.filter' });
    const typo = await call('POST', '/bulk/cancel', { filter: { stauts: 'failed' } });
    expect(typo.status).toBe(400);
    expect(typo.body.details).toMatchObject({ field: 'body.filter.stauts' });
  });
});

describe('GET /events', () => {
  it('streams every run’s events live, filtered by type, from Last-Event-ID', async () => {
    const { rt, client } = setup();
    const before = await rt.baton.start(defineTask({ name: 'early', run: async () => 1 }), {});
    await before.result();
    const stop = new AbortController();
    const seen: BatonEvent[] = [];
    const reading = (async () => {
      for await (const e of client.allEvents({
        types: ['run:succeeded', 'run:created'],
        signal: stop.signal,
      })) {
        seen.push(e);
        if (seen.length === 4) stop.abort();
      }
    })();
    const quick = defineTask({ name: 'quick', run: async () => 2 });
    const x = await rt.baton.start(quick, {});
    const y = await rt.baton.start(quick, {});
    await Promise.all([x.result(), y.result()]);
    await reading;
    // Only what happened after the stream opened, only the types asked for.
    expect(seen.map((e) => [e.runId, e.type]).sort()).toEqual(
      [
        [x.id, 'run:created'],
        [x.id, 'run:succeeded'],
        [y.id, 'run:created'],
        [y.id, 'run:succeeded'],
      ].sort(),
    );
    const replay: BatonEvent[] = [];
    const stop2 = new AbortController();
    for await (const e of client.allEvents({ afterId: 0, types: ['run:succeeded'], signal: stop2.signal })) {
      replay.push(e);
      if (replay.length === 3) stop2.abort();
    }
    expect(replay[0]?.runId).toBe(before.id);
    expect(new Set(replay.map((e) => e.runId))).toEqual(new Set([before.id, x.id, y.id]));
  });
});
