/**
 * A run with no time left ends at once, by its escalation policy, in real processes and over real
 * HTTP: `baton run --budget 0s`, a `{"budget": 0}` request, and a run SIGKILLed mid-attempt then
 * resumed after its whole budget has passed. Before the fix each of these cycled claim → crash →
 * lease expiry → requeue forever.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type SqliteDatabase, sqliteDriver } from '../src/store/index.ts';
import { type TestRuntime, testRuntime } from '../src/testing/index.ts';
import { patient } from './fixtures/budget-task.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const { Database } = sqliteDriver();

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-budget-'));
const task = join(import.meta.dirname, 'fixtures', 'budget-task.ts');
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...args];
const env = { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' };

function baton(...args: string[]) {
  const r = spawnSync(process.execPath, cli(...args), { cwd: dir, env, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

function statusOf(db: string): Array<{ status: string; deadline: number | null; owner: string | null }> {
  const d = new Database(db, { readonly: true });
  try {
    return d
      .prepare('SELECT status, deadline_at AS deadline, lease_owner AS owner FROM runs')
      .all() as Array<{ status: string; deadline: number | null; owner: string | null }>;
  } finally {
    d.close();
  }
}

function countEvents(db: string, type: string): number {
  let d: SqliteDatabase | undefined;
  try {
    d = new Database(db, { readonly: true, fileMustExist: true });
    return (d.prepare('SELECT count(*) AS n FROM events WHERE type = ?').get(type) as { n: number }).n;
  } catch {
    return 0; // the file is still being set up
  } finally {
    d?.close();
  }
}

/** Polls until `check` holds (bounded), for conditions another process brings about. */
async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a run with no time left ends at once', () => {
  it('baton run --budget 0s returns the escalation result instead of looping', () => {
    const db = join(dir, 'zero.db');
    const r = baton('--db', db, 'run', task, '--budget', '0s', '--json');
    expect(r.signal).toBeNull();
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'partial', output: { skipped: true } });
    expect(countEvents(db, 'lease:recovered')).toBe(0);
  });

  it('answers {"budget": 0} over HTTP with the result, not 408 forever', async () => {
    let rt: TestRuntime | undefined;
    let server: HttpServer | undefined;
    try {
      rt = testRuntime();
      rt.baton.register(patient);
      server = await serveHttp(rt.baton);
      const r = await fetch(`${server.url}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'patient', input: {}, budget: 0, mode: 'sync', timeoutMs: 20_000 }),
      });
      const body = (await r.json()) as Record<string, unknown>;
      expect(r.status).toBe(200);
      expect(JSON.stringify(body)).toMatch(/"skipped":true/);
    } finally {
      await server?.close();
      await rt?.dispose();
    }
  });

  it('a run SIGKILLed mid-attempt and resumed after its budget ends at once with its checkpointed findings', async () => {
    const db = join(dir, 'killed.db');
    const child = spawn(process.execPath, cli('--db', db, 'run', task, '--budget', '1s', '--json'), {
      cwd: dir,
      env,
      stdio: 'ignore',
    });
    children.add(child);
    await until(() => countEvents(db, 'checkpoint:saved') > 0, 'the first checkpoint');
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
    children.delete(child);
    const [before] = statusOf(db);
    expect(before).toMatchObject({ status: 'running' });
    // The budget is measured on the wall clock: wait (bounded) until the stored deadline has passed.
    await until(() => Date.now() > (before?.deadline ?? 0) + 50, 'the deadline to pass', 5_000);
    const id = (() => {
      const d = new Database(db, { readonly: true });
      const row = d.prepare('SELECT id FROM runs').get() as { id: string };
      d.close();
      return row.id;
    })();
    const r = baton('--db', db, 'resume', id, '--json');
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      status: 'partial',
      output: { partial: true, findings: [{ claim: 'found early' }] },
    });
    expect(statusOf(db)).toMatchObject([{ status: 'partial', owner: null }]);
  });
});
