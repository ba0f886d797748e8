/**
 * `baton.config.ts` as a user writes it, read by the commands and the server in real processes:
 * file references read from the configured workspace, db_query reads the declared tables of the
 * configured database, the default time zone applies, the database path comes from the config,
 * `--config` names another file, and a typo or a bad value is refused (exit 2) naming the key,
 * before anything is stored.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBaton, defineTask } from '../src/runtime/index.ts';
import { openSqliteStore, sqliteDriver } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const { Database } = sqliteDriver();

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-config-'));
const children = new Set<ChildProcess>();
const env = { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1', BATON_DB: '' };
delete (env as Record<string, string | undefined>).BATON_DB;

function baton(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...args], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const TASKS = `
import { defineTask } from ${JSON.stringify(join(root, 'src/index.ts'))};
export const echo = defineTask({ name: 'echo', run: async (input) => input });
`;

function project(name: string, config: string): string {
  const p = join(dir, name);
  mkdirSync(p, { recursive: true });
  writeFileSync(join(p, 'tasks.ts'), TASKS);
  writeFileSync(join(p, 'baton.config.ts'), config);
  return p;
}

const header = `import { defineConfig } from ${JSON.stringify(join(root, 'src/index.ts'))};\nimport { echo } from './tasks.ts';\n`;

const plan = {
  plan: {
    steps: [
      {
        aiName: 'echo',
        draftArgs: {
          notes: { data_reference: { ref_type: 'file', path: '/workspace/notes.md' } },
          methods: {
            data_reference: {
              ref_type: 'db_query',
              table: 'knowledge_atoms',
              conditions: [{ field: 'atom_type', operator: 'eq', value: 'methodology' }],
              limit: 10,
            },
          },
        },
      },
    ],
  },
};

let app = '';
beforeAll(() => {
  app = project(
    'app',
    `${header}export default defineConfig({
  db: './data/app.db',
  tasks: [echo],
  workspace: './corpus',
  tables: { knowledge_atoms: { columns: ['atom_id', 'atom_type', 'content'] } },
  tablesDatabase: './knowledge.db',
  timezone: 'Asia/Shanghai',
});
`,
  );
  mkdirSync(join(app, 'corpus'));
  mkdirSync(join(app, 'data'));
  writeFileSync(join(app, 'corpus', 'notes.md'), '# Notes\n\nAttention is all you need.\n');
  const k = new Database(join(app, 'knowledge.db'));
  k.exec(`CREATE TABLE knowledge_atoms (atom_id TEXT, atom_type TEXT, content TEXT, secret TEXT);
    INSERT INTO knowledge_atoms VALUES ('a1', 'methodology', 'ablation study', 'x'), ('a2', 'finding', 'it works', 'y');`);
  k.close();
  writeFileSync(join(app, 'plan.json'), JSON.stringify(plan));
});

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('baton.config.ts in the working directory', () => {
  let runId = '';
  it('gives `run` its tasks, workspace, tables and database', () => {
    const r = baton(app, 'run', 'plan.json', '--json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { id: string; status: string; output: Record<string, unknown> };
    expect(out.status).toBe('succeeded');
    const step = out.output['0'] as { notes: unknown; methods: unknown };
    expect(JSON.stringify(step.notes)).toContain('Attention is all you need.');
    // Only the declared columns of the rows the condition selects, from the configured database.
    expect(JSON.stringify(step.methods)).toContain(
      '{"atom_id":"a1","atom_type":"methodology","content":"ablation study"}',
    );
    expect(JSON.stringify(step.methods)).not.toContain('it works');
    expect(JSON.stringify(step.methods)).not.toContain('secret');
    expect(existsSync(join(app, 'data', 'app.db'))).toBe(true);
    expect(existsSync(join(app, 'baton.db'))).toBe(false);
    runId = out.id;
  });

  it('gives `ls` and `show` the configured database', () => {
    const ls = baton(app, 'ls', '--json');
    expect(ls.code).toBe(0);
    expect((JSON.parse(ls.out) as Array<{ id: string }>).map((r) => r.id)).toContain(runId);
    const show = baton(app, 'show', runId);
    expect(show.code).toBe(0);
    expect(show.out).toContain(runId);
  });

  it('gives `parse-time` the default time zone', () => {
    const r = baton(app, 'parse-time', 'tomorrow 9am', '--now', '2026-03-01T12:00:00Z', '--json');
    expect(r.code).toBe(0);
    expect(r.out).toContain('2026-03-02T09:00:00.000+08:00');
  });

  it('gives `serve` the same settings over HTTP', async () => {
    const child = spawn(
      process.execPath,
      ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), 'serve', '--port', '0'],
      { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /serving (http:\/\/\S+)/.exec(err);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const res = await fetch(`${url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        task: 'echo',
        mode: 'sync',
        input: { notes: { data_reference: { ref_type: 'file', path: '/workspace/notes.md' } } },
      }),
    });
    const body = (await res.json()) as { success: boolean; result: unknown };
    expect(res.status).toBe(200);
    expect(JSON.stringify(body.result)).toContain('Attention is all you need.');
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    children.delete(child);
  });
});

describe('baton serve --dashboard --no-worker', () => {
  it('serves the dashboard and the API but executes nothing (no worker registered, runs stay queued)', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        TSX_LOADER,
        join(root, 'src/cli/main.ts'),
        'serve',
        '--port',
        '0',
        '--dashboard',
        '--no-worker',
      ],
      { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /dashboard: (http:\/\/\S+)\/dashboard\//.exec(err);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const page = await fetch(`${url}/dashboard/runs/x`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('baton-dashboard');
    const started = await fetch(`${url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'echo', mode: 'async', input: {} }),
    });
    const { jobId } = (await started.json()) as { jobId: string };
    const overview = (await (await fetch(`${url}/overview`)).json()) as { workers: unknown[] };
    expect(overview.workers.filter((w) => (w as { pid: number }).pid === child.pid)).toEqual([]);
    const run = (await (await fetch(`${url}/runs/${jobId}`)).json()) as { run: { status: string } };
    expect(run.run.status).toBe('queued');
    await fetch(`${url}/runs/${jobId}/cancel`, { method: 'POST' });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    children.delete(child);
  });
});

describe('baton worker reads it too', () => {
  it('executes a run queued by another process with the configured workspace', async () => {
    const child = spawn(
      process.execPath,
      ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), '--json', 'worker', '--concurrency', '2'],
      { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    const ready = await new Promise<{ tasks: string[]; db: string }>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string));
      });
      child.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
    });
    expect(ready.tasks).toEqual(['echo']);
    expect(ready.db).toBe(join(app, 'data', 'app.db'));
    const store = openSqliteStore(ready.db);
    const queuer = createBaton({ store, worker: false, pollMs: 20 });
    try {
      // The same task as the worker's; this process only queues it (no worker here).
      const echo = defineTask({ name: 'echo', run: async (input: unknown) => input });
      const run = await queuer.start(echo, {
        notes: { data_reference: { ref_type: 'file', path: '/workspace/notes.md' } },
      });
      const outcome = await run.result();
      expect(outcome.status).toBe('succeeded');
      expect(JSON.stringify(outcome.output)).toContain('Attention is all you need.');
    } finally {
      await queuer.close();
      await store.close();
    }
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    children.delete(child);
  });
});

describe('--config names the file', () => {
  it('is read from another folder, with paths relative to the file', () => {
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const r = baton(
      elsewhere,
      '--config',
      join(app, 'baton.config.ts'),
      'run',
      join(app, 'plan.json'),
      '--json',
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'succeeded' });
    expect(existsSync(join(elsewhere, 'baton.db'))).toBe(false);
  });

  it('must exist', () => {
    const r = baton(app, '--config', 'nope.config.ts', 'ls');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--config: no such file: nope.config.ts');
  });
});

describe('a bad configuration is refused with exit 2, naming the key, before anything is stored', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['typo', `timzone: 'Asia/Shanghai'`, /baton\.config\.ts: timzone is not a known option/],
    ['nested typo', `refs: { maxFileByte: 10 }`, /refs\.maxFileByte is not a known option/],
    ['delivery typo', `delivery: { webhook: {} }`, /delivery\.webhook is not a known option/],
    ['zone', `timezone: 'Mars/Olympus'`, /timezone is invalid: .*IANA time zone/],
    [
      'webhook',
      `delivery: { webhooks: { ops: { url: 'ftp://x' } } }`,
      /delivery\.webhooks\.ops is invalid: .*url/,
    ],
    ['webhook key', `delivery: { webhooks: { ops: { url: 'https://example.com', secert: 'x' } } }`, /secert/],
    ['workspace', `workspace: 42`, /workspace must be a path/],
    ['tables', `tables: { t: { columns: ['a'], colour: 1 } }`, /tables\.t\.colour is not a known option/],
    ['context', `context: { previewCount: -1 }`, /context\..*previewCount/],
    ['ttl', `ttl: 'forever'`, /ttl is invalid/],
    ['tasks', `tasks: [{ name: 'x' }]`, /tasks\[0\] must be a task/],
    ['tables database', `tablesDatabase: './missing.db'`, /tablesDatabase cannot be opened/],
  ];
  for (const [name, body, message] of cases)
    it(name, () => {
      const p = project(
        `bad-${name.replace(/\W/g, '-')}`,
        `${header}export default defineConfig({ tasks: [echo], ${body} } as never);\n`,
      );
      writeFileSync(
        join(p, 'plan.json'),
        JSON.stringify({ plan: { steps: [{ aiName: 'echo', draftArgs: {} }] } }),
      );
      const r = baton(p, 'run', 'plan.json');
      expect(r.err).toMatch(message);
      expect(r.code).toBe(2);
      expect(existsSync(join(p, 'baton.db'))).toBe(false);
    });
});

describe('a baton.config.ts without a default export', () => {
  it('is a tasks module, as before configurations existed', () => {
    const p = join(dir, 'legacy');
    mkdirSync(p);
    writeFileSync(join(p, 'tasks.ts'), TASKS);
    writeFileSync(join(p, 'baton.config.ts'), `export { echo } from './tasks.ts';\n`);
    writeFileSync(
      join(p, 'plan.json'),
      JSON.stringify({ plan: { steps: [{ aiName: 'echo', draftArgs: { a: 1 } }] } }),
    );
    const r = baton(p, 'run', 'plan.json', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'succeeded', output: { '0': { a: 1 } } });
  });
});
