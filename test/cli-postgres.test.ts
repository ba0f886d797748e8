/**
 * Every CLI command on a Postgres URL (`--db postgres://…` and `BATON_DATABASE_URL`), in real
 * processes against the real server: run, ls, show, decide, resume, gc, worker and serve. A bad URL,
 * an unreachable server, a schema from a newer Baton and a schema that is not Baton's get exit
 * code 2, a clear message, and change nothing; no output ever contains the URL's password.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  describePostgres,
  testDatabases,
  withClient,
} from '../src/store/postgres/fixtures/pg-test-server.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-cli-pg-'));
const tasks = join(import.meta.dirname, 'fixtures', 'tasks.ts');
const SECRET = 'hunter2-s3cr3t';
const databases = testDatabases();
const children = new Set<ChildProcess>();
let url = '';
let dbName = '';

function withPassword(u: string, password = SECRET): string {
  const x = new URL(u);
  x.password = password;
  return x.toString();
}

function baton(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...args], {
    cwd: dir,
    env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const all = `${r.stdout}${r.stderr}`;
  // Whatever happens, the password never appears.
  expect(all).not.toContain(SECRET);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function tableCounts(schema: string): Promise<string> {
  return withClient(async (c) => {
    const tables = await c.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
      [schema],
    );
    const counts: string[] = [];
    for (const t of tables.rows as Array<{ table_name: string }>) {
      const n = await c.query(`SELECT count(*)::int AS n FROM "${schema}"."${t.table_name}"`);
      counts.push(`${t.table_name}=${(n.rows[0] as { n: number }).n}`);
    }
    return counts.join(',');
  }, url);
}

beforeAll(async () => {
  url = withPassword(await databases.create());
  dbName = new URL(url).pathname.slice(1);
});

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function plan(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(body));
  return path;
}

describePostgres('baton CLI on Postgres', () => {
  it('runs a plan, lists, shows, resumes and collects on a postgres:// URL', () => {
    const ok = plan('ok.json', {
      plan: {
        steps: [
          { aiName: 'double', draftArgs: { n: 2 } },
          { aiName: 'double', draftArgs: { n: 10 }, dependsOn: [0] },
        ],
      },
    });
    const r = baton(['--db', url, 'run', ok, '--tasks', tasks, '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out) as { id: string; status: string; output: Record<string, number> };
    expect(result).toMatchObject({ status: 'succeeded', output: { '0': 4, '1': 24 } });

    const ls = baton(['--db', url, 'ls', '--status', 'succeeded']);
    expect(ls.code).toBe(0);
    expect(ls.out).toContain(result.id);
    const show = baton(['--db', url, 'show', result.id]);
    expect(show.code).toBe(0);
    expect(show.out).toContain('run:succeeded');
    const resume = baton(['--db', url, 'resume', result.id, '--json']);
    expect(resume.code).toBe(0);
    expect(JSON.parse(resume.out)).toMatchObject({ status: 'succeeded' });
    expect(baton(['--db', url, 'gc']).code).toBe(0);
    // BATON_DATABASE_URL instead of --db.
    const viaEnv = baton(['ls', '--json'], { BATON_DATABASE_URL: url });
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.out).toContain(result.id);
  });

  it('waits for a decision and takes the answer from another process', () => {
    const ask = plan('ask.json', { plan: { steps: [{ aiName: 'stubborn', draftArgs: {} }] } });
    const r = baton(['--db', url, 'run', ask, '--tasks', tasks, '--json']);
    expect(r.code).toBe(4);
    const waiting = JSON.parse(r.out) as { id: string; decisions: Array<{ runId: string }> };
    const step = waiting.decisions[0]?.runId as string;
    const question = baton(['--db', url, 'decide', step]);
    expect(question.code).toBe(0);
    expect(question.out).toMatch(/\[Continue with partial results\]/);
    expect(baton(['--db', url, 'decide', step, 'continue_partial']).code).toBe(0);
    expect(baton(['--db', url, 'decide', step, 'skip']).code).toBe(3);
    const done = baton(['--db', url, 'resume', waiting.id, '--tasks', tasks, '--json']);
    expect(done.code).toBe(0);
  });

  it('keeps stores apart by ?schema=', () => {
    const other = `${url}${url.includes('?') ? '&' : '?'}schema=other_store`;
    const ls = baton(['--db', other, 'ls', '--json']);
    // ls needs an existing store: the schema is not created by reading.
    expect(ls.code).toBe(2);
    expect(ls.out).toContain('no Baton store in schema other_store');
  });

  it('refuses a bad URL, an unreachable server, a newer schema and a foreign schema with exit 2', async () => {
    const before = await tableCounts('baton');
    const cases: Array<[string, RegExp]> = [
      [`postgres://root:${SECRET}@127.0.0.1:notaport/${dbName}`, /not a usable Postgres URL/],
      [`postgres://root:${SECRET}@127.0.0.1:1/${dbName}`, /cannot open the Postgres store/],
      [`postgres://root:${SECRET}@127.0.0.1:5432/${dbName}?schema=`, /schema parameter/],
    ];
    for (const [i, [bad, message]] of cases.entries()) {
      for (const command of i === 0 ? [['ls'], ['worker', '--tasks', tasks]] : [['gc']]) {
        const r = baton(['--db', bad, ...command]);
        expect(r.code, `${bad} ${command.join(' ')}`).toBe(2);
        expect(r.err).toMatch(message);
      }
    }
    // A schema from a newer Baton.
    await withClient(
      (c) =>
        c.query(
          `CREATE SCHEMA future; CREATE TABLE future.baton_meta (key text primary key, value text not null);
         INSERT INTO future.baton_meta VALUES ('format', 'baton');
         CREATE TABLE future.baton_migrations (version int primary key, name text not null, applied_at bigint not null);
         INSERT INTO future.baton_migrations VALUES (9999, '9999_future.sql', 0);
         CREATE SCHEMA crm; CREATE TABLE crm.customers (id int);`.replaceAll(
            /future|crm/g,
            (m) => `${m}_${dbName.slice(-6)}`,
          ),
        ),
      url,
    );
    const suffix = dbName.slice(-6);
    const newer = baton(['--db', `${url}?schema=future_${suffix}`, 'worker', '--tasks', tasks]);
    expect(newer.code, newer.err).toBe(2);
    expect(newer.err).toMatch(/newer Baton/);
    const foreign = baton([
      '--db',
      `${url}?schema=crm_${suffix}`,
      'run',
      plan('x.json', { plan: { steps: [{ aiName: 'double', draftArgs: { n: 1 } }] } }),
      '--tasks',
      tasks,
    ]);
    expect(foreign.code).toBe(2);
    expect(foreign.err).toMatch(/not Baton's/);
    expect(await tableCounts(`crm_${suffix}`)).toBe('customers=0');
    expect(await tableCounts(`future_${suffix}`)).toBe('baton_meta=1,baton_migrations=1');
    expect(await tableCounts('baton')).toBe(before);
  });

  it('serves next to a worker on one database; both stop cleanly on SIGTERM', async () => {
    const worker = spawn(
      process.execPath,
      [
        '--import',
        TSX_LOADER,
        join(root, 'src/cli/main.ts'),
        '--db',
        url,
        '--json',
        'worker',
        '--tasks',
        tasks,
      ],
      { cwd: dir, env: { ...process.env, BATON_CLI_MAIN: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(worker);
    const serve = spawn(
      process.execPath,
      [
        '--import',
        TSX_LOADER,
        join(root, 'src/cli/main.ts'),
        '--db',
        url,
        'serve',
        '--port',
        '0',
        '--tasks',
        tasks,
      ],
      { cwd: dir, env: { ...process.env, BATON_CLI_MAIN: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(serve);
    let out = '';
    for (const c of [worker, serve]) {
      c.stdout?.on('data', (d) => {
        out += String(d);
      });
      c.stderr?.on('data', (d) => {
        out += String(d);
      });
    }
    const base = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const m = /baton serving (http:\/\/\S+)/.exec(out);
        if (m?.[1] && out.includes('"worker":"ready"')) resolve(m[1]);
      };
      worker.stdout?.on('data', check);
      serve.stderr?.on('data', check);
      serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
      worker.once('exit', (code) => reject(new Error(`worker exited ${code}: ${out}`)));
    });
    const res = await fetch(`${base}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'double', input: { n: 21 }, mode: 'sync' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: unknown }).result).toBe(42);
    for (const c of [worker, serve]) c.kill('SIGTERM');
    const codes = await Promise.all(
      [worker, serve].map((c) => new Promise<number | null>((resolve) => c.once('exit', resolve))),
    );
    expect(codes).toEqual([0, 0]);
    expect(out).not.toContain(SECRET);
  });
});
