/**
 * Deliveries across processes (issue 11 item 2, issue 12 item 6), as the README's deployment runs
 * them: an app and a `baton worker` process on one SQLite file. The run stores where its deliveries
 * go when it is created; the worker, which has neither the app's callback nor its webhook, executes
 * the tool but sends nothing and marks nothing — the deliveries stay pending until a process that
 * can serve them (the app, when it runs a worker) sends each exactly once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivered } from '../src/runtime/index.ts';
import { createBaton } from '../src/runtime/index.ts';
import { openSqliteStore } from '../src/store/index.ts';
import { notify } from './fixtures/delivery-app.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-deliveries-'));
const fixture = join(import.meta.dirname, 'fixtures', 'delivery-app.ts');
const children = new Set<ChildProcess>();
const env = { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' };
const hooks: Array<{ key: string; body: { runId: string; type: string; late?: boolean } }> = [];
const hookWaiters: Array<() => void> = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hooks.push({ key: String(req.headers['idempotency-key']), body: JSON.parse(body) });
      res.writeHead(200).end();
      for (const w of hookWaiters.splice(0)) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Lines a child prints on stdout, as they come. */
function lines(child: ChildProcess): AsyncGenerator<Record<string, unknown>> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let buffered = '';
  let ended = false;
  child.stdout?.on('data', (d) => {
    buffered += String(d);
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    queue.push(...parts.filter((p) => p.trim() !== ''));
    wake?.();
  });
  child.once('exit', () => {
    ended = true;
    wake?.();
  });
  return (async function* () {
    while (true) {
      const next = queue.shift();
      if (next !== undefined) yield JSON.parse(next) as Record<string, unknown>;
      else if (ended) return;
      else await new Promise<void>((r) => (wake = r));
    }
  })();
}

async function nextLine(
  it: AsyncGenerator<Record<string, unknown>>,
  what: string,
): Promise<Record<string, unknown>> {
  const { value, done } = await it.next();
  if (done) throw new Error(`process ended before printing ${what}`);
  return value;
}

async function startWorker(db: string, cwd = dir): Promise<ChildProcess> {
  // In `dir` the worker has no baton.config.ts: tasks from --tasks, no callback, no webhooks.
  const tasks = cwd === dir ? ['--tasks', fixture] : [];
  const child = track(
    spawn(
      process.execPath,
      ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), '--db', db, '--json', 'worker', ...tasks],
      { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] },
    ),
  );
  expect(await nextLine(lines(child), 'the ready line')).toMatchObject({ worker: 'ready' });
  return child;
}

const untilHooks = async (n: number) => {
  while (hooks.filter((h) => h.body.type === 'tool_result').length < n)
    await new Promise<void>((r) => hookWaiters.push(r));
};

describe('deliveries with an app and a baton worker on one database', () => {
  it('the worker executes the tool but leaves the app’s callback and webhook pending; the app sends each once', async () => {
    const db = join(dir, 'shared.db');
    const worker = await startWorker(db);
    const store = openSqliteStore(db);
    const config = (delivered: Delivered[]) => ({
      onDelivery: (d: Delivered) => void delivered.push(d),
      webhooks: { hook: { url, allowPrivateNetwork: true } },
    });
    // The app without a worker of its own: only the worker process can execute the runs.
    const appDelivered: Delivered[] = [];
    const app = createBaton({ store, worker: false, pollMs: 20, schedule: config(appDelivered) });
    const runs = await Promise.all(
      ['a', 'b', 'c'].map((text) => app.start(notify, { text, schedule: '2020-01-01T00:00:00Z' })),
    );
    const outcomes = await Promise.all(runs.map((r) => r.result()));
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const owners = new Set(
      (await store.readEvents({ limit: 1000 }))
        .filter((e) => e.type === 'attempt:started')
        .map((e) => (e.data as { owner: string }).owner),
    );
    const [workerRecord] = await store.listWorkers();
    expect([...owners]).toEqual([workerRecord?.id]);
    for (const r of runs) {
      // The targets were stored when the run was created, so the worker wrote a row for each.
      // (A schedule already past may also send an in-progress notice first; the results are what count.)
      const rows = (await store.listDeliveries(r.id)).filter((d) => d.kind === 'tool_result');
      expect(rows.map((d) => [d.channel, d.route, d.status, d.attempts])).toEqual([
        ['callback', 'callback:default', 'pending', 0],
        ['webhook:hook', `webhook:hook ${url}`, 'pending', 0],
      ]);
      const types = (await store.readEvents({ runId: r.id })).map((e) => e.type);
      expect(types).toContain('tool:result');
      expect(types.filter((t) => t.startsWith('delivery:'))).toEqual([]);
    }
    expect(appDelivered).toEqual([]);
    expect(hooks).toEqual([]);
    await app.close();

    // The app again, now with a worker: it serves both routes and sends every delivery once.
    const delivered: Delivered[] = [];
    const waiting = new Promise<void>((resolve) => {
      const c = config(delivered);
      const withWorker = createBaton({
        store,
        tasks: [notify],
        pollMs: 20,
        schedule: {
          ...c,
          onDelivery: (d) => {
            c.onDelivery(d);
            if (delivered.filter((x) => x.kind === 'tool_result').length === 3) resolve();
          },
        },
      });
      void withWorker.ready();
      after.push(() => withWorker.close());
    });
    await waiting;
    await untilHooks(3);
    const results = delivered.filter((d) => d.kind === 'tool_result');
    expect(results.map((d) => d.idempotencyKey).sort()).toEqual(
      runs.map((r) => `${r.id}:tool_result:callback`).sort(),
    );
    const posted = hooks.filter((h) => h.body.type === 'tool_result');
    expect(posted.map((h) => h.key).sort()).toEqual(
      runs.map((r) => `${r.id}:tool_result:webhook:hook`).sort(),
    );
    for (const f of after.splice(0)) await f();
    for (const r of runs) {
      const rows = (await store.listDeliveries(r.id)).filter((d) => d.kind === 'tool_result');
      expect(rows.map((d) => [d.channel, d.status, d.attempts])).toEqual([
        ['callback', 'delivered', 1],
        ['webhook:hook', 'delivered', 1],
      ]);
      const sent = (await store.readEvents({ runId: r.id })).filter(
        (e) => e.type === 'delivery:sent' && (e.data as { kind: string }).kind === 'tool_result',
      );
      expect(sent.map((e) => (e.data as { channel: string }).channel).sort()).toEqual([
        'callback',
        'webhook:hook',
      ]);
    }
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    await store.close();
  });
});

const after: Array<() => Promise<void>> = [];

/** Runs the fixture app as its own process; its stdout lines come through `out`. */
function app(
  mode: 'start' | 'await',
  db: string,
  hookUrl: string,
  arg: string,
  hook: Record<string, unknown> = {},
) {
  const child = track(
    spawn(process.execPath, ['--import', TSX_LOADER, fixture, mode, db, hookUrl, arg], {
      cwd: dir,
      env: { ...env, DELIVERY_HOOK: JSON.stringify(hook) },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  return { child, out: lines(child) };
}

async function until<T>(
  out: AsyncGenerator<Record<string, unknown>>,
  match: (line: Record<string, unknown>) => T | undefined,
): Promise<T> {
  for (;;) {
    const found = match(await nextLine(out, 'the expected line'));
    if (found !== undefined) return found;
  }
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

describe('a baton worker with the webhook in its baton.config.ts', () => {
  it('sends the app’s webhook deliveries (same name and URL) and leaves the app’s callback pending', async () => {
    const db = join(dir, 'configured.db');
    const project = join(dir, 'worker-project');
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'baton.config.ts'),
      `import { defineConfig } from ${JSON.stringify(join(root, 'src/index.ts'))};
import { notify } from ${JSON.stringify(fixture)};
export default defineConfig({ tasks: [notify], delivery: { webhooks: { hook: { url: ${JSON.stringify(url)}, allowPrivateNetwork: true } } } });
`,
    );
    const worker = await startWorker(db, project);
    const store = openSqliteStore(db);
    const appDelivered: Delivered[] = [];
    const app = createBaton({
      store,
      worker: false,
      pollMs: 20,
      schedule: {
        onDelivery: (d) => void appDelivered.push(d),
        webhooks: { hook: { url, allowPrivateNetwork: true } },
      },
    });
    const run = await app.start(notify, { text: 'configured', schedule: 'in 1 second' });
    expect((await run.result()).status).toBe('succeeded');
    await untilHook(run.id);
    const posted = hooks.filter((h) => h.body.runId === run.id);
    expect(posted.map((h) => h.key)).toEqual([`${run.id}:tool_result:webhook:hook`]);
    const rows = await store.listDeliveries(run.id);
    expect(rows.map((d) => [d.channel, d.status])).toEqual([
      ['callback', 'pending'],
      ['webhook:hook', expect.stringMatching(/pending|delivered/)],
    ]);
    expect(appDelivered).toEqual([]);
    worker.kill('SIGTERM');
    await killed(worker);
    const settled = await store.listDeliveries(run.id);
    expect(settled.map((d) => [d.channel, d.status, d.attempts])).toEqual([
      ['callback', 'pending', 0],
      ['webhook:hook', 'delivered', 1],
    ]);
    await app.close();
    await store.close();
  });
});

describe('deliveries after a crash', () => {
  it('a send cut off by SIGKILL is retried after its own timeout and backoff, not a fixed 120 s', async () => {
    const db = join(dir, 'crash-send.db');
    let hang = true;
    const seen: Array<{ key: string; at: number }> = [];
    let onRequest: (() => void) | undefined;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ key: String(req.headers['idempotency-key']), at: Date.now() });
        onRequest?.();
        // While `hang`, the request is never answered: the sender is killed in the middle of it.
        if (!hang) res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slow`;
    const hook = { timeout: '2s', retry: { base: '500ms' } };
    try {
      const first = app('start', db, hookUrl, 'in 1 second', hook);
      const runId = await until(first.out, (l) => l.started as string | undefined);
      await new Promise<void>((r) => (onRequest = r));
      first.child.kill('SIGKILL');
      const killedAt = Date.now();
      await killed(first.child);
      hang = false;
      const store = openSqliteStore(db);
      const [row] = (await store.listDeliveries(runId)).filter(
        (d) => d.channel === 'webhook:hook' && d.attempts === 1 && d.status === 'pending',
      );
      await store.close();
      expect(row).toBeDefined();
      // Hidden for the try's timeout (2 s) + 1 s + the backoff after attempt 1 (500 ms), counted
      // from when it was taken (before the kill) — not for 120 s.
      expect((row?.nextAt ?? 0) - killedAt).toBeLessThanOrEqual(3_500);
      expect((row?.nextAt ?? 0) - killedAt).toBeGreaterThan(0);
      const second = app('await', db, hookUrl, runId, hook);
      await until(second.out, (l) => (l.result === 'succeeded' ? true : undefined));
      while (seen.filter((s) => s.key === row?.idempotencyKey).length < 2)
        await new Promise<void>((r) => (onRequest = r));
      const tries = seen.filter((s) => s.key === row?.idempotencyKey);
      expect(tries[1]!.at).toBeGreaterThanOrEqual(row?.nextAt ?? 0);
      second.child.kill('SIGTERM');
      await killed(second.child);
      const after = openSqliteStore(db);
      const settled = (await after.listDeliveries(runId)).find((d) => d.id === row?.id);
      await after.close();
      expect(settled).toMatchObject({ status: 'delivered', attempts: 2 });
    } finally {
      receiver.close();
    }
  }, 60_000);

  it('a process that only awaits the result delivers what came due while nothing was running', async () => {
    const db = join(dir, 'restart.db');
    const first = app('start', db, url, 'in 2 seconds');
    const runId = await until(first.out, (l) => l.started as string | undefined);
    const store = openSqliteStore(db);
    // Wait until the result is held for its due time, then kill the process holding it.
    let run = await store.getRun(runId);
    while (run?.waitReason !== 'delivery') {
      await new Promise((r) => setTimeout(r, 20));
      run = await store.getRun(runId);
    }
    first.child.kill('SIGKILL');
    await killed(first.child);
    const due = Date.parse(String((run.options.schedule as { iso: string }).iso));
    // The due time passes while no process runs (a real wait: the processes read the system clock).
    while (Date.now() < due + 1_200) await new Promise((r) => setTimeout(r, 50));
    expect((await store.getRun(runId))?.status).toBe('waiting');
    await store.close();
    const second = app('await', db, url, runId);
    const lines: Array<Record<string, unknown>> = [];
    await until(second.out, (l) => {
      lines.push(l);
      return lines.some((x) => x.result) && lines.some((x) => x.kind === 'tool_result') ? true : undefined;
    });
    expect(lines).toContainEqual({ result: 'succeeded' });
    expect(lines).toContainEqual({
      delivered: runId,
      kind: 'tool_result',
      key: `${runId}:tool_result:callback`,
    });
    await untilHook(runId);
    const posted = hooks.find((h) => h.body.runId === runId && h.body.type === 'tool_result');
    expect(posted?.body).toMatchObject({ late: true, status: 'succeeded' });
    second.child.kill('SIGTERM');
    await killed(second.child);
  }, 60_000);
});

async function untilHook(runId: string): Promise<void> {
  while (!hooks.some((h) => h.body.runId === runId && h.body.type === 'tool_result'))
    await new Promise<void>((r) => hookWaiters.push(r));
}
