/**
 * A Baton fleet on one Postgres database under faults (issue 13 item 6), in real processes: three
 * `baton worker` processes and one `baton serve` (which only takes requests), ≥ 2,000 checkpointing
 * runs and ≥ 500 scheduled webhook deliveries. First one worker is SIGKILLed every few seconds and
 * started again; then every Baton connection is terminated (pg_terminate_backend); then the Postgres
 * server itself is stopped and started mid-run. Every run completes with the right output, no run
 * executes on two workers at once, no committed step or checkpoint comes from an attempt that was
 * already taken over, every committed checkpoint is intact, every delivery is sent (twice only when
 * a kill cut its send short: webhooks are at-least-once, with an idempotency key), no process exits
 * on its own, and the recovery times are printed (p50/p99).
 *
 * Postgres here is a private cluster (initdb into a temp directory): stopping the shared test server
 * would break every other test using it. Without the server binaries the test is skipped, except
 * under CI=true, where it fails.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_BIN, PrivateCluster } from './fixtures/pg-private-cluster.ts';
import { CHECKPOINT_EVERY, STEPS } from './fleet/baton.config.ts';
import { batonProcess, killAll, type Proc, percentile, waitFor } from './fleet/processes.ts';

const RUNS = 2_000;
const DELIVERIES = 500;
const WORKERS = 3;
const KILL_EVERY_MS = 3_000;
/** Requests in flight to `baton serve` while starting runs. */
const LANES = 24;

const project = join(import.meta.dirname, 'fleet');
const tmp = mkdtempSync(join(tmpdir(), 'baton-fleet-'));
const logFile = join(tmp, 'fleet.log');
writeFileSync(logFile, '');
const cleanups: Array<() => unknown> = [];

afterAll(async () => {
  killAll();
  for (const f of cleanups.reverse()) await f();
  rmSync(tmp, { recursive: true, force: true });
});

const fleetEnv = (url: string, hook: string) => ({
  url,
  cwd: project,
  env: { FLEET_LOG: logFile, FLEET_HOOK: hook },
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mark = (line: string) => appendFileSync(logFile, `${Date.now()} 0 ${line}\n`);

async function startWorker(url: string, hook: string): Promise<Proc> {
  const proc = batonProcess(fleetEnv(url, hook), ['--json', 'worker', '--concurrency', '20']);
  await waitFor(proc, 'stdout', /"worker":"ready"/);
  return proc;
}

const describeFleet = PG_BIN || process.env.CI === 'true' ? describe : describe.skip;
if (!PG_BIN) console.warn('[skipped] Postgres fleet: no Postgres server binaries (initdb) here');

describeFleet('a Baton fleet on Postgres under faults', () => {
  it('3 workers + serve, 2,000 runs, 500 deliveries: kills, terminated sessions and a server restart', async () => {
    const cluster = await PrivateCluster.start({ fsync: 'off', max_connections: '200' });
    cleanups.push(() => cluster.destroy());
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE fleet');
    await admin.end();
    const url = cluster.url.replace(/\/postgres$/, '/fleet');
    const query = async <R>(text: string): Promise<R[]> => {
      const c = new pg.Client({ connectionString: url, application_name: 'fleet-test' });
      await c.connect();
      try {
        return (await c.query(text)).rows as R[];
      } finally {
        await c.end();
      }
    };

    // The webhook receiver: every request's idempotency key and when it came.
    const received: Array<{ key: string; at: number }> = [];
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push({ key: String(req.headers['idempotency-key']), at: Date.now() });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => receiver.close());
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const serve = batonProcess(fleetEnv(url, hook), ['serve', '--port', '0', '--no-worker']);
    const base = (await waitFor(serve, 'stderr', /baton serving (http:\/\/[^\s]+)/))[1] as string;
    const workers: Proc[] = [];
    for (let i = 0; i < WORKERS; i++) workers.push(await startWorker(url, hook));

    // Runs and deliveries are started through `baton serve`, a few requests at a time.
    const post = async (path: string, body: unknown): Promise<string> => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const out = (await res.json()) as { jobId?: string };
      if (res.status !== 202 || !out.jobId) throw new Error(`${path}: ${res.status} ${JSON.stringify(out)}`);
      return out.jobId;
    };
    const inputs = new Map<string, number>();
    const deliveryRuns: string[] = [];
    const startWave = async (from: number, spreadS: number, stepMs?: number) => {
      const jobs: Array<() => Promise<void>> = [];
      for (let k = from; k < from + RUNS / 2; k++)
        jobs.push(async () => void inputs.set(await post('/tasks/fleet', { k, stepMs, mode: 'async' }), k));
      for (let d = 0; d < DELIVERIES / 2; d++) {
        const due = 2 + Math.floor((d / (DELIVERIES / 2)) * spreadS);
        jobs.push(async () => {
          deliveryRuns.push(
            await post('/tasks/notify', {
              text: `d${from}-${d}`,
              schedule: `in ${due} seconds`,
              mode: 'async',
            }),
          );
        });
      }
      const lanes = Array.from({ length: LANES }, async (_, lane) => {
        for (let j = lane; j < jobs.length; j += LANES) await jobs[j]?.();
      });
      await Promise.all(lanes);
    };
    const succeeded = async () =>
      Number(
        (
          await query<{ n: string }>(
            `SELECT count(*) AS n FROM baton.runs WHERE name = 'fleet' AND status = 'succeeded'`,
          )
        )[0]?.n,
      );
    const untilSucceeded = async (n: number, deadlineMs: number) => {
      const end = Date.now() + deadlineMs;
      while ((await succeeded()) < n) {
        if (Date.now() > end) throw new Error(`fewer than ${n} fleet runs succeeded in ${deadlineMs} ms`);
        await sleep(200);
      }
    };

    // Phase 1: one worker SIGKILLed every few seconds and started again, while wave 1 is being
    // started and executed, until it is done.
    const began = Date.now();
    const kills: Array<{ pid: number; at: number }> = [];
    let phase1 = true;
    const killing = (async () => {
      while (phase1) {
        await sleep(KILL_EVERY_MS);
        if (!phase1) break;
        const index = kills.length % WORKERS;
        const victim = workers[index] as Proc;
        const pid = victim.child.pid as number;
        victim.child.kill('SIGKILL');
        await new Promise((r) => victim.child.once('exit', r));
        kills.push({ pid, at: Date.now() });
        mark(`killed ${pid}`);
        workers[index] = await startWorker(url, hook);
      }
    })();
    try {
      await startWave(0, 30);
      await untilSucceeded(RUNS / 2, 150_000);
    } finally {
      phase1 = false;
      await killing;
    }
    const phase1Ms = Date.now() - began;
    console.log(`fleet: phase 1 done in ${phase1Ms} ms, ${kills.length} kills`);

    // Phase 2: every Baton session terminated mid-run. This wave's steps work 200-210 ms (≈ 1.2 s a
    // run, ≈ 20 s for the wave on 60 slots), so most of it is still to run once it is all posted
    // (≈ 5 s through `baton serve`): with 5 ms, and even 40 ms, steps the workers could finish the
    // wave as fast as it was posted, leaving nothing running to cut (seen in gates).
    await startWave(RUNS / 2, 20, 200);
    await untilSucceeded(RUNS / 2 + 100, 60_000);
    const beforeTerminate = await succeeded();
    const terminatedAt = Date.now();
    const [terminated] = await query<{ n: string }>(
      `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
       WHERE datname = 'fleet' AND application_name LIKE 'baton%'`,
    );
    mark('terminated');
    expect(Number(terminated?.n)).toBeGreaterThanOrEqual(WORKERS + 1);

    // Phase 3: the server stopped and started again mid-run (as a restart or a failover does), once
    // runs have gone on succeeding after the terminate (its pause is measured up to the stop; the
    // stop used to come within 200 ms, and the restart's pause was reported as the terminate's),
    // with runs left for the restart.
    // Runs ending after the terminate may have been ending before it (50 came within 117 ms once):
    // the stop waits for a step or checkpoint committed after the terminate too, or 10 s.
    const committedAfter = (t: number) =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .some((l) => {
          const [at, , kind] = l.split(' ');
          return Number(at) > t && (kind === 'committed' || kind === 'ckpt');
        });
    for (const until = Date.now() + 10_000; !committedAfter(terminatedAt) && Date.now() < until; )
      await sleep(50);
    await untilSucceeded(Math.min(beforeTerminate + 50, RUNS - 100), 60_000);
    const stoppedAt = Date.now();
    cluster.stopServer();
    mark('stopped');
    await sleep(1_500);
    cluster.startServer();
    const upAt = Date.now();
    mark('started');
    await untilSucceeded(RUNS, 120_000);
    console.log(`fleet: all runs done at ${Date.now() - began} ms`);

    // Every scheduled delivery sent and recorded as delivered.
    const deliveriesDone = Date.now() + 60_000;
    let rows: Array<{ key: string; status: string; attempts: number }> = [];
    for (;;) {
      rows = await query(
        `SELECT idempotency_key AS key, status, attempts FROM baton.deliveries WHERE kind = 'tool_result'`,
      );
      if (rows.length === DELIVERIES && rows.every((r) => r.status === 'delivered')) break;
      if (Date.now() > deliveriesDone) {
        const notify = await query(
          `SELECT status, wait_reason, count(*) AS n FROM baton.runs WHERE name = 'notify' GROUP BY 1, 2`,
        );
        const timers = await query(`SELECT kind, count(*) AS n FROM baton.timers GROUP BY 1`);
        throw new Error(
          `${rows.length} of ${DELIVERIES} deliveries, ${rows.filter((r) => r.status === 'delivered').length} delivered; notify runs ${JSON.stringify(notify)}; timers ${JSON.stringify(timers)}`,
        );
      }
      await sleep(250);
    }
    const totalMs = Date.now() - began;

    // No process ended on its own: the killed ones were ours.
    for (const w of workers) expect(w.child.exitCode, w.tail()).toBeNull();
    expect(serve.child.exitCode, serve.tail()).toBeNull();

    // Every run succeeded with the output its input implies.
    const runs = await query<{ id: string; status: string; output: string }>(
      `SELECT id, status, output FROM baton.runs WHERE name = 'fleet'`,
    );
    expect(runs).toHaveLength(RUNS);
    const sumOf = (k: number) => k * ((STEPS * (STEPS - 1)) / 2);
    for (const r of runs) {
      expect(r.status).toBe('succeeded');
      expect(JSON.parse(r.output)).toEqual({ sum: sumOf(inputs.get(r.id) as number) });
    }
    const notified = await query<{ status: string }>(`SELECT status FROM baton.runs WHERE name = 'notify'`);
    expect(notified.filter((r) => r.status === 'succeeded')).toHaveLength(DELIVERIES);
    expect(deliveryRuns).toHaveLength(DELIVERIES);

    // The log, in the order things happened (one file, O_APPEND).
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [at, pid, kind, run, ...rest] = l.split(' ');
        return { at: Number(at), pid: Number(pid), kind: kind as string, run: run as string, rest };
      });
    const killedBefore = new Set<number>();
    const holder = new Map<string, number>();
    const takenOver = new Map<string, Set<number>>();
    const overlaps: string[] = [];
    const staleCommits: string[] = [];
    const committedCheckpoints: Array<{ run: string; seq: number; i: number; sum: number }> = [];
    for (const l of lines) {
      if (l.kind === 'killed') killedBefore.add(Number(l.run));
      else if (l.kind === 'begin') {
        const held = holder.get(l.run);
        if (held !== undefined && held !== l.pid && !killedBefore.has(held))
          overlaps.push(`${l.run}: began on ${l.pid} while ${held} still ran it`);
        if (held !== undefined && held !== l.pid) {
          const old = takenOver.get(l.run) ?? new Set();
          old.add(held);
          takenOver.set(l.run, old);
        }
        holder.set(l.run, l.pid);
      } else if (l.kind === 'end') {
        if (holder.get(l.run) === l.pid) holder.delete(l.run);
      } else if (l.kind === 'committed' || l.kind === 'ckpt') {
        if (takenOver.get(l.run)?.has(l.pid))
          staleCommits.push(`${l.run}: ${l.kind} by ${l.pid} after takeover`);
        if (l.kind === 'ckpt') {
          const [seq, i, sum] = l.rest.map(Number) as [number, number, number];
          committedCheckpoints.push({ run: l.run, seq, i, sum });
        }
      }
    }
    expect(overlaps).toEqual([]);
    expect(staleCommits).toEqual([]);

    // Every checkpoint a task was told had committed is in the table as it was written, and each
    // run's checkpoints advance two steps at a time.
    const stored = await query<{ run_id: string; seq: number; state: string }>(
      `SELECT run_id, seq, state FROM baton.checkpoints ORDER BY run_id, seq`,
    );
    const byKey = new Map(
      stored.map((c) => [`${c.run_id}/${c.seq}`, JSON.parse(c.state) as { i: number; sum: number }]),
    );
    for (const c of committedCheckpoints)
      expect(byKey.get(`${c.run}/${c.seq}`)).toEqual({ i: c.i, sum: c.sum });
    const chains = new Map<string, number[]>();
    for (const c of stored) chains.set(c.run_id, [...(chains.get(c.run_id) ?? []), JSON.parse(c.state).i]);
    const expected = Array.from({ length: STEPS / CHECKPOINT_EVERY }, (_, n) => (n + 1) * CHECKPOINT_EVERY);
    for (const [run, chain] of chains) expect([run, chain]).toEqual([run, expected]);
    expect(chains.size).toBe(RUNS);

    // Deliveries: each key received; a second receipt only for a send a kill cut short.
    const keys = new Map<string, number[]>();
    for (const r of received) keys.set(r.key, [...(keys.get(r.key) ?? []), r.at]);
    const resultKeys = rows.map((r) => r.key);
    for (const k of resultKeys) expect(keys.get(k)?.length ?? 0, k).toBeGreaterThanOrEqual(1);
    const twice = resultKeys.filter((k) => (keys.get(k)?.length ?? 0) > 1);
    for (const k of twice) {
      const first = (keys.get(k) as number[])[0] as number;
      // Sent, then the sender died (or lost its connection) before it recorded the send.
      const cut =
        kills.some((x) => x.at >= first && x.at - first < 5_000) ||
        [terminatedAt, stoppedAt].some((t) => t >= first && t - first < 5_000);
      expect(cut, `${k} sent twice without a kill or a cut connection`).toBe(true);
    }

    // Recovery times.
    const takeBacks: number[] = [];
    for (const kill of kills) {
      const open = new Map<string, boolean>();
      for (const l of lines) {
        if (l.at > kill.at) break;
        if (l.pid !== kill.pid) continue;
        if (l.kind === 'begin') open.set(l.run, true);
        else if (l.kind === 'end') open.delete(l.run);
      }
      for (const run of open.keys()) {
        const next = lines.find((l) => l.kind === 'begin' && l.run === run && l.at >= kill.at);
        if (next) takeBacks.push(next.at - kill.at);
      }
    }
    const firstCommitAfter = (t: number) =>
      (lines.find((l) => (l.kind === 'committed' || l.kind === 'ckpt') && l.at > t)?.at ?? Number.NaN) - t;
    // The longest pause between two commits in the 10 s after a fault (from the fault itself), or
    // until `end`.
    const stallAfter = (t: number, end = t + 10_000) => {
      let prev = t;
      let longest = 0;
      for (const l of lines) {
        if ((l.kind !== 'committed' && l.kind !== 'ckpt') || l.at <= t) continue;
        if (l.at > Math.min(end, t + 10_000)) break;
        longest = Math.max(longest, l.at - prev);
        prev = l.at;
      }
      return longest;
    };
    const report = {
      runs: RUNS,
      deliveries: DELIVERIES,
      kills: kills.length,
      killToTakenBackMs: {
        n: takeBacks.length,
        p50: percentile(takeBacks, 50),
        p99: percentile(takeBacks, 99),
      },
      terminatedSessions: Number(terminated?.n),
      terminateToNextCommitMs: firstCommitAfter(terminatedAt),
      terminateLongestPauseMs: stallAfter(terminatedAt, stoppedAt),
      serverUpToNextCommitMs: firstCommitAfter(upAt),
      stopToNextCommitMs: firstCommitAfter(stoppedAt),
      restartLongestPauseMs: stallAfter(upAt),
      sentTwice: twice.length,
      phase1Ms,
      totalMs,
    };
    console.log(`postgres fleet: ${JSON.stringify(report)}`);
    expect(takeBacks.length).toBeGreaterThan(0);
    expect(report.terminateToNextCommitMs).toBeLessThan(10_000);
    expect(report.serverUpToNextCommitMs).toBeLessThan(10_000);
  }, 420_000);
});
