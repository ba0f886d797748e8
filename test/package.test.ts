/**
 * The package as a user gets it: packed with `npm pack` from a clean copy of this repository,
 * installed from the tarball into a fresh project with `npm install`, then used there — a task run
 * to completion on SQLite, the `baton` command through npx, every subpath imported at run time and
 * type-checked with `tsc`. It runs in the e2e lane only.
 *
 * better-sqlite3 has no prebuilt binary this closed network can fetch, so npm would compile SQLite
 * again for the new project (minutes on a loaded 2-core machine). The addon this checkout already
 * built — same better-sqlite3 version, same Node — is offered to its installer as a local prebuild
 * (prebuild-install's documented `local-prebuilds` option), as a release download would be; the
 * install falls back to compiling when it does not match.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '..');
const NPM_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

function versionOf(pkg: string): string {
  return (
    JSON.parse(readFileSync(join(REPO, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }
  ).version;
}

async function sh(cmd: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { cwd, env: NPM_ENV, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(' ')} failed in ${cwd}:\n${e.stderr ?? ''}\n${e.stdout ?? ''}\n${e.message}`,
    );
  }
}

/** The files of this checkout a clone would have: tracked plus untracked-but-not-ignored. */
async function checkoutFiles(): Promise<string[]> {
  const out = await sh('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], REPO);
  return out.split('\0').filter((f) => f.length > 0);
}

let work: string;
let app: string;
let tarball: string;
let packed: string[];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'baton-package-'));
  // 1. A clean copy of the repository (no dist/, no build output), built and packed there.
  const stage = join(work, 'stage');
  for (const file of await checkoutFiles()) {
    const to = join(stage, file);
    mkdirSync(dirname(to), { recursive: true });
    try {
      cpSync(join(REPO, file), to);
    } catch (err) {
      // A file deleted in the working tree but not yet staged is not part of a clone either.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  symlinkSync(join(REPO, 'node_modules'), join(stage, 'node_modules'), 'dir');
  await sh('npm', ['run', 'build'], stage);
  const packJson = JSON.parse(
    await sh('npm', ['pack', '--json', '--pack-destination', work], stage),
  ) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const [info] = packJson;
  if (!info) throw new Error('npm pack reported no tarball');
  tarball = join(work, info.filename);
  packed = info.files.map((f) => f.path);

  // The addon built for this checkout, named as better-sqlite3's release download would be.
  const prebuilds = join(work, 'prebuilds');
  mkdirSync(prebuilds);
  const sqlite = join(REPO, 'node_modules', 'better-sqlite3');
  if (existsSync(join(sqlite, 'build', 'Release', 'better_sqlite3.node'))) {
    const name = `better-sqlite3-v${versionOf('better-sqlite3')}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    await sh('tar', ['-czf', join(prebuilds, name), '-C', sqlite, 'build/Release/better_sqlite3.node'], work);
    NPM_ENV.npm_config_better_sqlite3_local_prebuilds = prebuilds;
  }

  // 2. A fresh project that installs the tarball, as a user would (with TypeScript for the type check).
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'baton-user', private: true, type: 'module' }),
  );
  await sh(
    'npm',
    ['install', tarball, `typescript@${versionOf('typescript')}`, `@types/node@${versionOf('@types/node')}`],
    app,
  );
}, 1_200_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
}, 300_000);

describe('the packed package', () => {
  it('ships the build, the CLI and the migrations, and nothing from tests, benches or sources', () => {
    expect(packed).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'bin/baton.js', 'dist/index.js']),
    );
    expect(packed).toContain('dist/index.d.ts');
    expect(packed).toContain('dist/cli/main.js');
    // The dashboard's bundle, built by `npm run build`; never its sources.
    expect(packed).toContain('dist/dashboard/static/app.js');
    expect(packed).toContain('dist/dashboard/static/app.css');
    expect(packed.filter((f) => f.startsWith('dist/dashboard/app/'))).toEqual([]);
    expect(packed.some((f) => /^dist\/store\/sqlite\/migrations\/0001_.*\.sql$/.test(f))).toBe(true);
    expect(packed.some((f) => /^dist\/store\/postgres\/migrations\/0001_.*\.sql$/.test(f))).toBe(true);
    const stray = packed.filter(
      (f) =>
        /^(test|bench|examples|src|docs|\.ci)\//.test(f) ||
        /\.(test|contract)\.(js|d\.ts|js\.map)$/.test(f) ||
        /\/fixtures\//.test(f) ||
        /\.db$/.test(f),
    );
    expect(stray).toEqual([]);
  });

  it('installs with its own dependencies only: nothing of ours is a dev dependency it needs', () => {
    const installed = readdirSync(join(app, 'node_modules'));
    expect(installed).toContain('baton');
    expect(installed).toContain('better-sqlite3');
    // better-sqlite3 13 (an optional alias; the driver Baton uses where Node-API 10 exists) is
    // skipped by npm on a Node its engines exclude, such as 20, and the install still succeeds.
    if (Number(process.versions.node.split('.')[0]) < 22)
      expect(installed).not.toContain('better-sqlite3-13');
    else expect(installed).toContain('better-sqlite3-13');
    expect(installed).not.toContain('vitest');
    expect(installed).not.toContain('@biomejs');
  });
});

describe('the installed package', () => {
  it('runs a task to completion on a SQLite file', async () => {
    writeFileSync(
      join(app, 'run-task.mjs'),
      `import { createBaton, defineTask } from 'baton';
import { z } from 'zod';
const greet = defineTask({
  name: 'greet',
  input: z.object({ who: z.string() }),
  run: async ({ who }, ctx) => {
    const word = await ctx.step('word', async () => 'hello');
    await ctx.checkpoint({ word });
    return { greeting: word + ' ' + who };
  },
});
const baton = createBaton({ store: './user.db', tasks: [greet] });
const run = await baton.start(greet, { who: 'package' });
const outcome = await run.result();
await baton.close();
console.log(JSON.stringify({ status: outcome.status, output: outcome.output }));
`,
    );
    const out = await sh(process.execPath, ['run-task.mjs'], app);
    expect(JSON.parse(out.trim())).toEqual({ status: 'succeeded', output: { greeting: 'hello package' } });
    expect(readdirSync(app)).toContain('user.db');
  });

  it("import 'baton' loads a few bundled files and none of the dependencies Baton loads on first use", async () => {
    writeFileSync(
      join(app, 'root-loads.mjs'),
      `await import('baton');
await new Promise((r) => setTimeout(r, 50)); // the hook thread's last messages
console.log(JSON.stringify([...globalThis.__loadedUrls]));
`,
    );
    const urls = JSON.parse(
      (
        await sh(
          process.execPath,
          ['--import', join(REPO, 'test', 'fixtures', 'record-loads.mjs'), 'root-loads.mjs'],
          app,
        )
      ).trim(),
    ) as string[];
    // scripts/bundle.ts: ~15 files (the root and its shared chunks) instead of ~190 modules.
    const own = urls.filter((u) => u.includes('/node_modules/baton/dist/'));
    expect(own.length).toBeGreaterThan(0);
    expect(own.length).toBeLessThanOrEqual(30);
    const heavy = urls.filter((u) =>
      /\/node_modules\/(zod|luxon|pino|ajv|json-p3|better-sqlite3[^/]*|pg|gpt-tokenizer|pdfjs-dist|lunar-javascript|ai)\//.test(
        u,
      ),
    );
    expect(heavy).toEqual([]);
  });

  it('runs a task in a worker thread from the bundled build (isolation: "thread")', async () => {
    writeFileSync(
      join(app, 'thread-task.mjs'),
      `import { isMainThread } from 'node:worker_threads';
import { createBaton, defineTask } from 'baton';
export const where = defineTask({
  name: 'where',
  isolation: 'thread',
  module: import.meta.url,
  run: async () => (isMainThread ? 'main' : 'thread'),
});
if (isMainThread && process.argv[1] === new URL(import.meta.url).pathname) {
  const baton = createBaton({ store: './thread.db', tasks: [where] });
  const outcome = await (await baton.start(where)).result();
  await baton.close();
  console.log(JSON.stringify({ status: outcome.status, output: outcome.output }));
}
`,
    );
    const out = await sh(process.execPath, ['thread-task.mjs'], app);
    expect(JSON.parse(out.trim())).toEqual({ status: 'succeeded', output: 'thread' });
  });

  it('loads every subpath at run time', async () => {
    writeFileSync(
      join(app, 'subpaths.mjs'),
      `const names = {};
for (const p of ['baton', 'baton/http', 'baton/client', 'baton/postgres', 'baton/testing', 'baton/serverless', 'baton/store', 'baton/schedule', 'baton/refs', 'baton/context', 'baton/agent', 'baton/budget', 'baton/retry', 'baton/webhooks', 'baton/tools']) {
  names[p] = Object.keys(await import(p)).length;
}
console.log(JSON.stringify(names));
`,
    );
    const counts = JSON.parse((await sh(process.execPath, ['subpaths.mjs'], app)).trim()) as Record<
      string,
      number
    >;
    for (const [subpath, count] of Object.entries(counts)) expect(count, subpath).toBeGreaterThan(0);
  });

  it("leaves the integrations' optional peers out: baton/langgraph names the missing peer", async () => {
    expect(readdirSync(join(app, 'node_modules'))).not.toContain('@langchain');
    writeFileSync(
      join(app, 'langgraph.mjs'),
      `try { await import('baton/langgraph'); console.log('loaded'); } catch (e) { console.log(e.code + ' ' + e.message); }
`,
    );
    const out = (await sh(process.execPath, ['langgraph.mjs'], app)).trim();
    expect(out).toMatch(/^ERR_MODULE_NOT_FOUND .*@langchain\/(langgraph-checkpoint|core)/);
  });

  it('serves the dashboard from the package (no build step, nothing fetched from elsewhere)', async () => {
    writeFileSync(
      join(app, 'dashboard.mjs'),
      `import { createBaton } from 'baton';
import { serveHttp } from 'baton/http';
const baton = createBaton({ store: './dash.db' });
const server = await serveHttp(baton, { dashboard: true });
const page = await fetch(server.url + '/dashboard/runs/x');
const html = await page.text();
const js = await fetch(server.url + html.match(/src="([^"]+)"/)[1]);
const body = await js.text();
console.log(JSON.stringify({ page: page.status, js: js.status, type: js.headers.get('content-type'), bytes: body.length }));
await server.close();
await baton.close();
`,
    );
    const out = JSON.parse((await sh(process.execPath, ['dashboard.mjs'], app)).trim()) as Record<
      string,
      unknown
    >;
    expect(out).toMatchObject({ page: 200, js: 200, type: 'text/javascript; charset=utf-8' });
    expect(out.bytes).toBeGreaterThan(10_000);
  });

  it('runs `npx baton --help` and `npx baton parse-time "in 5 minutes" --json`', async () => {
    const help = await sh('npx', ['--no-install', 'baton', '--help'], app);
    expect(help).toMatch(/Usage: baton/);
    for (const command of ['run', 'resume', 'ls', 'show', 'decide', 'gc', 'serve', 'worker', 'parse-time'])
      expect(help).toContain(command);
    const parsed = JSON.parse(
      await sh('npx', ['--no-install', 'baton', 'parse-time', 'in 5 minutes', '--json'], app),
    );
    expect(parsed).toMatchObject({ delayMs: 300_000, past: false, kind: 'relative' });
  });

  it('type-checks code that uses the root and every subpath, with real types (not any)', async () => {
    writeFileSync(
      join(app, 'uses-baton.ts'),
      `import { createBaton, defineTask } from 'baton';
import { type ClientOptions, createClient } from 'baton/client';
import { createHttpHandler, type HttpHandler } from 'baton/http';
import { PostgresStore } from 'baton/postgres';
import { ManualClock, testRuntime } from 'baton/testing';
import { z } from 'zod';

const add = defineTask({ name: 'add', input: z.object({ n: z.number() }), run: async ({ n }) => n + 1 });
// @ts-expect-error the input type comes from the schema: there is no 'm'
defineTask({ name: 'bad', input: z.object({ n: z.number() }), run: async ({ m }) => m });

const baton = createBaton({ store: './typed.db', tasks: [add] });
export const handler: HttpHandler = createHttpHandler(baton);
const options: ClientOptions = { baseUrl: 'http://127.0.0.1:8080' };
export const client = createClient(options);
// @ts-expect-error a pool is a pg.Pool (this fails if the types of pg did not resolve)
export const bad = new PostgresStore({ pool: 42 });
export const clock = new ManualClock(0);
// @ts-expect-error advance takes milliseconds
await clock.advance('soon');
export const rt = testRuntime;

// The built declarations carry the outcome union and the checkpoint's type (issue 15 item 2).
export async function outcomeTypes() {
  const outcome = await (await baton.start(add, { n: 1 })).result();
  if (outcome.status === 'succeeded') {
    const n: number = outcome.output;
    return n;
  }
  if (outcome.status === 'partial') {
    // @ts-expect-error a partial run's output is the timeout result, not the task's output
    const n: number = outcome.output;
    return n;
  }
  return undefined;
}
export const resumable = defineTask({
  name: 'resumable',
  checkpointSchema: z.object({ next: z.number() }),
  run: async (_input: unknown, ctx) => {
    const next: number = ctx.lastCheckpoint?.state.next ?? 0;
    // @ts-expect-error ctx.checkpoint takes the checkpointSchema's shape
    await ctx.checkpoint({ next: 'soon' });
    return next;
  },
});
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          // The AI SDK's own declarations name an untyped module; the probes above catch any of ours.
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['uses-baton.ts'],
      }),
    );
    await sh(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], app);
  });
});
