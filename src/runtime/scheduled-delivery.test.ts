/**
 * Scheduled delivery (protocol 004) through the engine, on the manual clock: results held until
 * the stated time, the in-progress notice when the tool is late, errors delivered at once, delivery
 * after a restart, webhooks to a real local server, and the protocol's plan with schedules.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { verifySignature } from '../delivery/index.ts';
import { openSqliteStore } from '../store/index.ts';
import { advanceUntil, eventOf } from '../testing/index.ts';
import { ManualClock } from '../time/index.ts';
import { defineTool } from '../tools/index.ts';
import { type Baton, createBaton } from './baton.ts';
import type { BatonOptions } from './baton-options.ts';
import { defineFlow, loadPlan } from './define-flow.ts';
import type { Delivered } from './delivery-service.ts';

const SCHEDULE = {
  oneOf: [
    { type: 'string' },
    {
      type: 'object',
      properties: { when: { type: 'string' }, language: { type: 'string' }, timezone: { type: 'string' } },
    },
  ],
};

function drawing(workMs: number, timeout?: string) {
  return defineTool({
    name: 'image_draw',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string' }, schedule: SCHEDULE },
      required: ['prompt'],
    },
    ...(timeout ? { timeout } : {}),
    handler: async (args: { prompt: string }, ctx) => {
      await ctx.delay(workMs);
      return { image: `drawing of ${args.prompt}`, sawSchedule: 'schedule' in args };
    },
  });
}

let dir: string;
let clock: ManualClock;
let baton: Baton;
let logs: Array<Record<string, unknown>>;
const delivered: Delivered[] = [];
const servers: Server[] = [];

afterEach(async () => {
  await baton?.close();
  for (const s of servers.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
  delivered.length = 0;
});

function open(options: Partial<BatonOptions> = {}, keepDir = false): Baton {
  if (!keepDir) {
    dir = mkdtempSync(join(tmpdir(), 'baton-sched-'));
    clock = new ManualClock('2026-11-22T12:00:00Z');
  }
  logs = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  baton = createBaton({
    // NORMAL: acknowledged at commit, not after an fdatasync that takes real time the manual clock
    // does not wait for.
    store: openSqliteStore(join(dir, 'b.db'), { clock, synchronous: 'NORMAL' }),
    clock,
    logger,
    schedule: { defaultTimezone: 'Asia/Shanghai', onDelivery: (d) => void delivered.push(d) },
    ...options,
  });
  return baton;
}

const events = async (id: string) =>
  (await baton.store.readEvents({ runId: id })).map((e) => ({
    type: e.type,
    at: e.at,
    data: e.data as Record<string, unknown>,
  }));
const t0 = Date.parse('2026-11-22T12:00:00Z');

describe('scheduled delivery', () => {
  it('holds a result that is ready early until the time the user asked for', async () => {
    open();
    const run = await baton.start(drawing(45_000), {
      prompt: '1girl, beautiful anime style',
      schedule: 'in 2 minutes',
    });
    await eventOf(baton, 'attempt:started', run.id);
    await clock.advance(50_000);
    expect((await baton.getRun(run.id))?.waitReason).toBe('delivery');
    expect((await events(run.id)).some((e) => e.type === 'tool:result')).toBe(false);
    await clock.advance(70_000);
    const out = await run.result();
    expect(out.output).toEqual({ image: 'drawing of 1girl, beautiful anime style', sawSchedule: false });
    const result = (await events(run.id)).find((e) => e.type === 'tool:result');
    expect(result?.at).toBe(t0 + 120_000);
    expect(result?.data).toMatchObject({
      type: 'tool_result',
      aiName: 'image_draw',
      status: 'succeeded',
      late: false,
    });
    expect((await events(run.id)).map((e) => e.type)).toContain('tool:args');
    await baton.worker?.idle();
    await clock.advance(1);
    expect(delivered.map((d) => [d.kind, d.idempotencyKey])).toEqual([
      ['tool_result', `${run.id}:tool_result:callback`],
    ]);
    const schedule = logs.filter((l) => l.label === 'SCHEDULE').map((l) => l.msg);
    expect(schedule).toEqual(['Schedule 延迟反馈启用', 'Schedule 延迟反馈: 工具已提前完成，延迟后反馈']);
    expect(logs.find((l) => l.msg === 'Schedule 延迟反馈启用')).toMatchObject({
      aiName: 'image_draw',
      scheduleText: 'in 2 minutes',
      delayMs: 120_000,
      targetISO: '2026-11-22T20:02:00.000+08:00',
    });
  });

  it('sends a friendly in-progress notice at the due time when the tool is late, then the result', async () => {
    open();
    const run = await baton.start(drawing(180_000), { prompt: 'a cat', schedule: '2分钟后' });
    await eventOf(baton, 'attempt:started', run.id);
    await clock.advance(120_000);
    const notice = await eventOf(baton, 'tool:choice', run.id);
    expect(notice.at).toBe(t0 + 120_000);
    expect(notice.data).toMatchObject({ type: 'tool_choice', status: 'in_progress' });
    expect(String(notice.data.message)).toMatch(/[\u4e00-\u9fff]/);
    expect(String(notice.data.message)).not.toMatch(/image_draw|ms\b|timeout/i);
    expect((await baton.getRun(run.id))?.status).toBe('running');
    await clock.advance(60_000);
    await run.result();
    const result = (await events(run.id)).find((e) => e.type === 'tool:result');
    expect(result?.at).toBe(t0 + 180_000);
    expect(logs.filter((l) => l.label === 'SCHEDULE').map((l) => l.msg)).toEqual([
      'Schedule 延迟反馈启用',
      'Schedule 延迟反馈: 发送中间状态',
      'Schedule 延迟反馈: 工具延迟完成',
    ]);
  });

  it("delivers a tool's own timeout error at once, not at the due time", async () => {
    open();
    const run = await baton.start(drawing(600_000, '60s'), { prompt: 'slow', schedule: 'in 2 minutes' });
    await eventOf(baton, 'attempt:started', run.id);
    await clock.advance(62_000);
    const out = await run.result();
    expect(out.status).not.toBe('succeeded');
    const result = (await events(run.id)).find((e) => e.type === 'tool:result');
    expect(result?.at).toBeLessThan(t0 + 62_000);
    expect(result?.data).toMatchObject({ status: expect.stringMatching(/failed|partial/) });
  });

  it('delivers, marked late, a result that came due while Baton was down', async () => {
    open();
    const run = await baton.start(drawing(10_000), {
      prompt: 'held',
      schedule: { when: 'in 5 minutes', language: 'en', timezone: 'UTC' },
    });
    await eventOf(baton, 'attempt:started', run.id);
    await clock.advance(15_000);
    expect((await baton.getRun(run.id))?.waitReason).toBe('delivery');
    await baton.close();
    clock.setWallTime(clock.now() + 600_000); // ten minutes pass while the process is gone
    open({}, true);
    baton.register(drawing(10_000));
    await baton.ready();
    const out = await baton.result(run.id);
    expect(out.status).toBe('succeeded');
    const result = (await events(run.id)).find((e) => e.type === 'tool:result');
    expect(result?.data).toMatchObject({ late: true });
    // The tool finished early; only the delivery was late, so no "工具延迟完成" line.
    expect(logs.map((l) => l.msg)).not.toContain('Schedule 延迟反馈: 工具延迟完成');
  });

  it('delivers a schedule already past the moment the result exists, with no in-progress notice first', async () => {
    open();
    const run = await baton.start(drawing(30_000), { prompt: 'now', schedule: '2026-11-22T11:00:00Z' });
    await eventOf(baton, 'attempt:started', run.id);
    await clock.advance(30_000);
    expect((await run.result()).status).toBe('succeeded');
    const types = (await events(run.id)).map((e) => e.type);
    expect(types).not.toContain('tool:choice');
    const result = (await events(run.id)).find((e) => e.type === 'tool:result');
    expect(result).toMatchObject({ at: t0 + 30_000, data: { status: 'succeeded', late: false } });
    expect(logs.filter((l) => l.label === 'SCHEDULE').map((l) => l.msg)).toEqual(['Schedule 延迟反馈启用']);
    await baton.worker?.idle();
    await clock.advance(1);
    expect(delivered.map((d) => d.kind)).toEqual(['tool_result']);
  });

  it('emits the tool_result of a tool called without a schedule, as an event and to onDelivery', async () => {
    open();
    const run = await baton.start(drawing(1_000), { prompt: 'plain' });
    await eventOf(baton, 'attempt:started', run.id);
    await clock.advance(1_000);
    expect((await run.result()).status).toBe('succeeded');
    const flow = (await events(run.id)).map((e) => e.type).filter((t) => t.startsWith('tool:'));
    expect(flow).toEqual(['tool:args', 'tool:result']);
    const result = (await events(run.id)).find((e) => e.type === 'tool:result');
    expect(result?.data).toMatchObject({
      type: 'tool_result',
      aiName: 'image_draw',
      status: 'succeeded',
      result: { image: 'drawing of plain', sawSchedule: false },
      late: false,
    });
    expect(result?.data).not.toHaveProperty('scheduled');
    await advanceUntil(clock, async () => delivered.length > 0);
    expect(delivered.map((d) => [d.kind, d.idempotencyKey, d.payload.status])).toEqual([
      ['tool_result', `${run.id}:tool_result:callback`, 'succeeded'],
    ]);
    expect(logs.some((l) => l.label === 'SCHEDULE')).toBe(false);
  });

  it('posts each delivery once to a real webhook, signed, retrying a failed post with the same key', async () => {
    const seen: Array<{ status: number; key: string; ok: boolean }> = [];
    let answers = [500, 200];
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          const status = answers.shift() ?? 200;
          const check = verifySignature({
            secret: 's3cret',
            header: req.headers['baton-signature'] as string,
            body,
            nowMs: clock.now(),
          });
          seen.push({ status, key: String(req.headers['idempotency-key']), ok: check.ok });
          res.writeHead(status).end();
        });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    open({ schedule: { webhooks: { ops: { url, secret: 's3cret', allowPrivateNetwork: true } } } });
    const run = await baton.start(drawing(1_000), { prompt: 'hook', schedule: 'in 30 seconds' });
    await eventOf(baton, 'attempt:started', run.id);
    const has = (type: string) => async () => (await events(run.id)).some((e) => e.type === type);
    await advanceUntil(clock, has('delivery:sent'));
    expect(seen.map((s) => s.status)).toEqual([500, 200]);
    expect(new Set(seen.map((s) => s.key))).toEqual(new Set([`${run.id}:tool_result:webhook:ops`]));
    expect(seen.every((s) => s.ok)).toBe(true);
    answers = [200];
    await clock.advance(10_000);
    expect(seen.length).toBe(2);
  });

  it("runs the protocol's plan: steps start when their upstream finished, deliveries follow their own times", async () => {
    open();
    const step = (name: string) =>
      defineTool({
        name,
        inputSchema: { type: 'object', properties: { schedule: SCHEDULE } },
        handler: async (_args, ctx) => {
          await ctx.delay(5_000);
          return name;
        },
      });
    baton.register(step('local__task1'), step('local__task2'), step('local__task3'));
    const plan = loadPlan({
      plan: {
        steps: [
          { aiName: 'local__task1', draftArgs: { schedule: '1分钟后' } },
          { aiName: 'local__task2', draftArgs: { schedule: '2分钟后' }, dependsOn: [0] },
          { aiName: 'local__task3', draftArgs: { schedule: '3分钟后' }, dependsOn: [1] },
        ],
      },
    });
    const run = await baton.start(plan, {});
    for (let i = 0; i < 40; i++) await clock.advance(5_000);
    const out = await baton.result(run.id);
    expect(out.status).toBe('succeeded');
    const all = await baton.store.readEvents({ rootId: run.id });
    const at = (type: string, step: string) =>
      all.find((e) => e.type === type && e.runId === `${run.id}.${step}`)?.at;
    expect([at('tool:result', '0'), at('tool:result', '1'), at('tool:result', '2')]).toEqual([
      t0 + 60_000,
      t0 + 120_000,
      t0 + 180_000,
    ]);
    // Step 1 started as soon as step 0 had finished working (5 s), not when its result was delivered (60 s).
    expect(at('attempt:started', '1')).toBeLessThan(t0 + 15_000);
  });

  it('refuses a schedule on a tool that does not declare one, and an unreadable one, storing nothing', async () => {
    open();
    const plain = defineTool({
      name: 'repo_info',
      inputSchema: { type: 'object', properties: { repo: { type: 'string' } } },
      handler: () => 1,
    });
    const a = await baton.start(plain, { repo: 'x', schedule: 'in 2 minutes' }).catch((e: unknown) => e);
    expect(isBatonError(a, 'SCHEDULE_NOT_SUPPORTED')).toBe(true);
    const draw = drawing(1);
    const b = await baton
      .start(draw, { prompt: 'x', schedule: 'whenever you like' })
      .catch((e: unknown) => e);
    expect(isBatonError(b, 'TIME_EXPRESSION_INVALID')).toBe(true);
    const c = await baton
      .start(draw, { prompt: 'x', schedule: { when: 'in 2 minutes', timezone: 'Mars/Olympus' } })
      .catch((e: unknown) => e);
    expect(isBatonError(c, 'TIMEZONE_INVALID')).toBe(true);
    const flow = defineFlow({
      name: 'f',
      steps: [{ id: 'a', task: plain, input: { repo: 'y', schedule: '1分钟后' } }],
    });
    expect(isBatonError(await baton.start(flow, {}).catch((e: unknown) => e), 'PLAN_INVALID')).toBe(true);
    expect(await baton.listRuns()).toEqual([]);
  });
});
