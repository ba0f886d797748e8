/**
 * Protocol 003's testing checklist, item by item, against the HTTP API over real sockets
 * (127.0.0.1, port 0) with a scripted agent on a manual clock: build, syntax, imports, a fresh
 * request, the timeout's checkpoint, resume loading it, the turn it continues from, several
 * resumes, an invalid checkpoint falling back to a fresh start, and cached results.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptContext, ScriptedTurn } from '../src/agent/index.ts';
import { type BatonClient, createClient, type RunProgress } from '../src/client/index.ts';
import {
  type AgentJob,
  agentJob,
  drive,
  evenScript,
  protocolScript,
} from '../src/http/fixtures/agent-jobs.ts';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { sqliteDriver } from '../src/store/index.ts';
import { type ManualClock, type TestRuntime, testRuntime } from '../src/testing/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const { Database } = sqliteDriver();

const root = join(import.meta.dirname, '..');
const FOLDERS = ['src/http', 'src/client', 'src/serverless'];

let rt: TestRuntime | undefined;
let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  await rt?.dispose();
  server = undefined;
  rt = undefined;
});

/** A runtime on a manual clock, the job's agent on the same clock, the API on a real socket. */
async function serve(
  make: (clock: ManualClock) => AgentJob,
): Promise<{ rt: TestRuntime; job: AgentJob; client: BatonClient; url: string }> {
  rt = testRuntime();
  const job = make(rt.clock);
  rt.baton.register(job.task);
  server = await serveHttp(rt.baton);
  return { rt, job, client: createClient({ baseUrl: server.url, clock: rt.clock }), url: server.url };
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(p);
    }
  };
  for (const f of FOLDERS) walk(join(root, f));
  return out;
}

describe('protocol 003 checklist over HTTP', () => {
  it('1. build succeeds: the three modules type-check with the project settings', () => {
    const config = ts.readConfigFile(join(root, 'tsconfig.json'), (p) => ts.sys.readFile(p));
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    const program = ts.createProgram(sourceFiles(), { ...parsed.options, noEmit: true });
    const ours = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && FOLDERS.some((f) => relative(root, d.file?.fileName ?? '').startsWith(f)))
      .map(
        (d) =>
          `${relative(root, d.file?.fileName ?? '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(ours).toEqual([]);
  }, 180_000);

  it('2. module syntax is valid: every file, compiled to JS, passes node --check', () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-syntax-'));
    try {
      const files = sourceFiles().filter((f) => !f.endsWith('.test.ts'));
      expect(files.length).toBeGreaterThan(10);
      for (const file of files) {
        const js = ts.transpileModule(readFileSync(file, 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
        }).outputText;
        const out = join(dir, `${relative(root, file).replace(/[/\\]/g, '_')}.mjs`);
        writeFileSync(out, js);
        const r = spawnSync(process.execPath, ['--check', out], { encoding: 'utf8' });
        expect(r.stderr, file).toBe('');
        expect(r.status, file).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('3. all imports resolve: a fresh Node process loads the three entry points', () => {
    const urls = ['src/http/index.ts', 'src/client/index.ts', 'src/serverless/index.ts'].map(
      (p) => pathToFileURL(join(root, p)).href,
    );
    const script = `const out = {}; for (const u of ${JSON.stringify(urls)}) out[u.split('/src/')[1]] = Object.keys(await import(u)).sort(); console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const exports = JSON.parse(r.stdout) as Record<string, string[]>;
    expect(exports['http/index.ts']).toEqual(
      expect.arrayContaining(['createHttpHandler', 'serveHttp', 'measureStore']),
    );
    expect(exports['client/index.ts']).toEqual(
      expect.arrayContaining(['createClient', 'SseParser', 'BatonHttpError']),
    );
    expect(exports['serverless/index.ts']).toEqual(['createServerlessHandler']);
  });

  it('4. a fresh request completes: 200 with the result and the protocol metadata', async () => {
    const { rt, url } = await serve((clock) => agentJob(clock, evenScript(3, 1_000)));
    const response = await drive(
      rt.clock,
      post(`${url}/runs`, { task: 'insights', input: {}, mode: 'sync' }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      success: true,
      result: { text: 'done after 3 turns', turns: 3, toolCalls: 2, wasResumed: false },
      metadata: { mode: 'sync', turns: 3, toolCalls: 2, durationMs: 3_000, wasResumed: false },
    });
    expect((body.metadata as { jobId: string }).jobId).toMatch(/^run_/);
  });

  it('5. a timeout saves a checkpoint and answers 408 with the protocol body', async () => {
    const { rt, url } = await serve((clock) => agentJob(clock, protocolScript));
    const response = await drive(rt.clock, post(`${url}/runs`, { task: 'insights', input: {} }));
    expect(response.status).toBe(408);
    const body = (await response.json()) as { details: { jobId: string; durationMs: number } };
    const { jobId, durationMs } = body.details;
    expect(body).toEqual({
      success: false,
      error: 'insights_timeout',
      message:
        'insights timed out after 60000ms. A checkpoint was saved - retry with resumeJobId to continue.',
      details: { jobId, canResume: true, wasResumed: false, durationMs, timeoutMs: 60_000 },
    });
    expect(durationMs).toBeGreaterThanOrEqual(55_000);
    expect(durationMs).toBeLessThan(60_000);
    const checkpoint = await rt.store.getLastCheckpoint(jobId);
    expect(checkpoint?.state).toMatchObject({ turnCount: 8, toolCallCount: 12, version: '1.0' });
    const types = (await rt.store.readEvents({ runId: jobId, limit: 1000 })).map((e) => e.type);
    expect(types.lastIndexOf('checkpoint:saved')).toBeLessThan(types.indexOf('run:waiting'));
    expect((await rt.baton.getRun(jobId))?.waitReason).toBe('resume');
  });

  it('6. a resume request loads the checkpoint', async () => {
    const { job, rt, url } = await serve((clock) => agentJob(clock, protocolScript));
    const first = (await (await drive(rt.clock, post(`${url}/runs`, { task: 'insights' }))).json()) as {
      details: { jobId: string };
    };
    const { jobId } = first.details;
    const saved = await rt.store.getLastCheckpoint(jobId);
    const resumed = await drive(rt.clock, post(`${url}/runs`, { resumeJobId: jobId }));
    expect(resumed.status).toBe(200);
    const events = await rt.store.readEvents({ runId: jobId, limit: 1000 });
    const loaded = events.filter((e) => e.type === 'checkpoint:loaded');
    expect(loaded.map((e) => (e.data as { seq: number }).seq)).toEqual([saved?.seq]);
    // The resumed invocation's first model call already had the 8 saved turns in its prompt.
    expect(job.turnsPlayed().slice(8, 9)).toEqual([9]);
  });

  it('7. the resume continues from the correct turn: 8 + 10 = 18 turns, 12 + 13 = 25 tool calls', async () => {
    const { job, rt, client } = await serve((clock) => agentJob(clock, protocolScript));
    const first = await drive(rt.clock, client.call('insights', {}));
    expect(first.kind).toBe('timeout');
    const jobId = first.kind === 'timeout' ? first.body.details.jobId : '';
    const second = await drive(rt.clock, client.resume(jobId));
    expect(second).toMatchObject({
      kind: 'result',
      body: {
        success: true,
        metadata: { jobId, turns: 18, toolCalls: 25, durationMs: 30_000, wasResumed: true },
      },
    });
    expect(job.turnsPlayed()).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
  });

  it('8. multiple resumes: the client resumes on every 408 and reports progress until the answer', async () => {
    const { job, rt, client } = await serve((clock) =>
      agentJob(clock, evenScript(12, 5_000), { timeout: '20s', maxTurns: 12 }),
    );
    const progress: RunProgress[] = [];
    const done = await drive(
      rt.clock,
      client.run(
        'insights',
        {},
        { maxTurns: 12, onProgress: (p) => progress.push(p), backoff: { initialMs: 500 } },
      ),
    );
    expect(done).toMatchObject({ status: 'succeeded', resumes: 3, requests: 4 });
    expect(done.status === 'succeeded' && done.metadata).toMatchObject({
      turns: 12,
      toolCalls: 11,
      wasResumed: true,
    });
    const timeouts = progress.filter((p) => p.phase === 'timeout');
    expect(timeouts.map((p) => p.turns)).toEqual([3, 6, 9]);
    // With maxTurns known: the rate so far (3 turns per 15 s) over the turns left, plus the backoff.
    expect(timeouts.map((p) => p.estimatedRemainingMs)).toEqual([45_500, 31_000, 17_000]);
    expect(progress.at(-1)).toMatchObject({ phase: 'done', estimatedRemainingMs: 0 });
    expect(job.turnsPlayed()).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const resumedEvents = (await rt.store.readEvents({ runId: done.jobId, limit: 1000 })).filter(
      (e) => e.type === 'run:resumed',
    );
    expect(resumedEvents).toHaveLength(3);
  });

  describe('9. an invalid checkpoint falls back to a fresh start', () => {
    // Slow only in the first invocation (it parks after 3 turns); a fresh start then finishes at once.
    const slowFirst = (context: ScriptContext): ScriptedTurn => ({
      ...evenScript(6, 1_000)(context),
      delayMs: context.callIndex < 3 ? 5_000 : 1_000,
    });

    async function parkedJob() {
      const { job, rt, client } = await serve((clock) => agentJob(clock, slowFirst, { timeout: '20s' }));
      const first = await drive(rt.clock, client.call('insights', {}));
      if (first.kind !== 'timeout') throw new Error(`expected a 408, got ${first.kind}`);
      return { job, rt, client, jobId: first.body.details.jobId };
    }

    function rewriteCheckpoint(rt: TestRuntime, jobId: string, state: string): void {
      const db = new Database(join(rt.dir, 'baton.db'));
      db.prepare('UPDATE checkpoints SET state = ? WHERE run_id = ?').run(state, jobId);
      db.close();
    }

    it('a checkpoint that fails validation is rejected, recorded, and the job starts over', async () => {
      const { job, rt, client, jobId } = await parkedJob();
      rewriteCheckpoint(
        rt,
        jobId,
        JSON.stringify({ conversationHistory: 'lost', turnCount: 3, version: '1.0' }),
      );
      const answer = await drive(rt.clock, client.resume(jobId));
      expect(answer).toMatchObject({ kind: 'result', body: { metadata: { turns: 6, wasResumed: false } } });
      expect(job.turnsPlayed()).toEqual([1, 2, 3, 1, 2, 3, 4, 5, 6]);
      const rejected = (await rt.store.readEvents({ runId: jobId, limit: 1000 })).filter(
        (e) => e.type === 'task:event' && (e.data as { kind: string }).kind === 'checkpoint:rejected',
      );
      expect(rejected).toHaveLength(1);
    });

    it('a checkpoint that is not even JSON is reported by the engine and the job starts over', async () => {
      const { job, rt, client, jobId } = await parkedJob();
      rewriteCheckpoint(rt, jobId, '{"conversationHistory": [');
      const answer = await drive(rt.clock, client.resume(jobId));
      expect(answer).toMatchObject({ kind: 'result', body: { metadata: { turns: 6, wasResumed: false } } });
      expect(job.turnsPlayed()).toEqual([1, 2, 3, 1, 2, 3, 4, 5, 6]);
      const types = (await rt.store.readEvents({ runId: jobId, limit: 1000 })).map((e) => e.type);
      expect(types).toContain('checkpoint:invalid');
    });
  });

  it('10. a completed job returns its cached result without running again', async () => {
    const { job, rt, client, url } = await serve((clock) => agentJob(clock, protocolScript));
    const first = await drive(rt.clock, client.call('insights', {}));
    const jobId = first.kind === 'timeout' ? first.body.details.jobId : '';
    const finished = await drive(rt.clock, client.resume(jobId));
    expect(finished.kind).toBe('result');
    const calls = job.turnsPlayed().length;
    const eventsBefore = (await rt.store.readEvents({ runId: jobId, limit: 1000 })).length;
    for (const response of [
      await post(`${url}/runs/${jobId}/resume`, {}),
      await post(`${url}/runs`, { resumeJobId: jobId }),
    ]) {
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        success: true,
        result: { text: 'Battery health is good.', turns: 18 },
        metadata: { jobId, turns: 18, toolCalls: 25, wasResumed: false, cached: true },
      });
    }
    expect(job.turnsPlayed()).toHaveLength(calls);
    expect(await rt.store.readEvents({ runId: jobId, limit: 1000 })).toHaveLength(eventsBefore);
  });
});
