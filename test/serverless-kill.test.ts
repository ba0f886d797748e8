/**
 * The serverless adapter against a platform that really kills: each invocation is a fresh Node
 * process serving the adapter (4 s limit, 1.5 s margin) with a slow scripted agent, and the harness
 * SIGKILLs it at the limit whatever it is doing. The first invocation answers 408 before the kill
 * with its checkpoint saved; each next process, on the same SQLite file, resumes the job by id and
 * the conversation continues from the checkpoint — the turn count carries on, no turn is lost or
 * played twice — until the last one answers 200.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const LIMIT_MS = 4_000;
const MARGIN_MS = 1_500;
const TURN_MS = 200;
const TURNS = 24;
const dir = mkdtempSync(join(tmpdir(), 'baton-serverless-'));
const db = join(dir, 'jobs.db');
const log = join(dir, 'turns.log');
const fixture = join(import.meta.dirname, '..', 'src', 'serverless', 'fixtures', 'slow-agent-function.ts');
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startFunction(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      TSX_LOADER,
      fixture,
      db,
      log,
      String(LIMIT_MS),
      String(MARGIN_MS),
      String(TURN_MS),
      String(TURNS),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  child.on('exit', () => children.delete(child));
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += String(d);
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += String(d);
      const m = /ready (\d+)/.exec(out);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.on('exit', (code) => reject(new Error(`function exited (${code}) before listening: ${err}`)));
  });
}

interface Invocation {
  pid: number;
  status: number;
  body: Record<string, unknown>;
  answeredAfterMs: number;
  killedBySignal: string | null;
}

/** One platform invocation: a fresh process, one request, SIGKILL at the limit. */
async function invoke(path: string, body: unknown): Promise<Invocation> {
  const { child, url } = await startFunction();
  const exited = new Promise<string | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  const sent = performance.now();
  const kill = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS);
  try {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = { status: response.status, body: (await response.json()) as Record<string, unknown> };
    const answeredAfterMs = performance.now() - sent;
    const killedBySignal = await exited;
    return { pid: child.pid ?? 0, ...answer, answeredAfterMs, killedBySignal };
  } finally {
    clearTimeout(kill);
  }
}

function turnsByProcess(): Map<number, number[]> {
  const byPid = new Map<number, number[]>();
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const [pid, turn] = line.split(' ').map(Number) as [number, number];
    byPid.set(pid, [...(byPid.get(pid) ?? []), turn]);
  }
  return byPid;
}

describe('serverless adapter under a platform that SIGKILLs at the limit', () => {
  it('answers 408 before the kill, and fresh processes resume the job from its checkpoint to the end', async () => {
    writeFileSync(log, '');
    const invocations: Invocation[] = [
      await invoke('/runs', { task: 'slow-insights', input: {}, mode: 'sync' }),
    ];
    const first = invocations[0] as Invocation;
    expect(first.status).toBe(408);
    const jobId = (first.body.details as { jobId: string }).jobId;
    while ((invocations.at(-1) as Invocation).status === 408 && invocations.length < 6)
      invocations.push(await invoke('/runs', { resumeJobId: jobId }));

    const last = invocations.at(-1) as Invocation;
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({
      success: true,
      metadata: { jobId, turns: TURNS, toolCalls: TURNS - 1, wasResumed: true },
    });
    for (const inv of invocations) {
      // Every answer went out before the deadline (limit − margin), and every process was killed.
      expect(inv.answeredAfterMs).toBeLessThan(LIMIT_MS - MARGIN_MS + 1_000);
      expect(inv.killedBySignal).toBe('SIGKILL');
    }
    for (const timeout of invocations.slice(0, -1)) {
      expect(timeout.body).toMatchObject({
        error: 'slow-insights_timeout',
        details: { jobId, canResume: true, timeoutMs: LIMIT_MS - MARGIN_MS },
      });
      expect(timeout.body.message).toMatch(/A checkpoint was saved - retry with resumeJobId to continue\.$/);
    }
    expect(invocations.length).toBeGreaterThanOrEqual(3);

    // Each process continued exactly where the previous one's checkpoint left off.
    const played = invocations.map((inv) => turnsByProcess().get(inv.pid) ?? []);
    let next = 1;
    for (const turns of played) {
      expect(turns[0]).toBe(next);
      expect(turns).toEqual(Array.from({ length: turns.length }, (_, i) => next + i));
      next += turns.length;
    }
    expect(next - 1).toBe(TURNS);

    const store = openSqliteStore(db);
    try {
      expect((await store.getRun(jobId))?.status).toBe('succeeded');
      const resumed = (await store.readEvents({ runId: jobId, limit: 10_000 })).filter(
        (e) => e.type === 'run:resumed',
      );
      expect(resumed).toHaveLength(invocations.length - 1);
    } finally {
      await store.close();
    }
  });
});
