/**
 * The resume lock over real HTTP: 100 clients resume the same parked job at once. Exactly one
 * proceeds (its answer is the continued job); every other one gets 409 naming the holder, or —
 * once the job is done — its cached result. No turn runs twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentJob, drive, protocolScript } from '../src/http/fixtures/agent-jobs.ts';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type TestRuntime, testRuntime } from '../src/testing/index.ts';

let rt: TestRuntime | undefined;
let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  await rt?.dispose();
});

interface Answer {
  status: number;
  body: {
    success: boolean;
    error?: string;
    message?: string;
    details?: { holder?: string };
    metadata?: { cached?: boolean; wasResumed?: boolean; turns?: number };
  };
}

describe('100 clients resuming the same job at once', () => {
  it('lets exactly one proceed; the rest get 409 naming the holder or the cached result', async () => {
    rt = testRuntime();
    const job = agentJob(rt.clock, protocolScript);
    rt.baton.register(job.task);
    server = await serveHttp(rt.baton);
    const url = server.url;
    const first = await drive(
      rt.clock,
      fetch(`${url}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'insights', input: {} }),
      }),
    );
    expect(first.status).toBe(408);
    const { jobId } = ((await first.json()) as { details: { jobId: string } }).details;

    const resumeAll = (n: number) =>
      Promise.all(
        Array.from({ length: n }, async (): Promise<Answer> => {
          const r = await fetch(`${url}/runs/${jobId}/resume`, { method: 'POST' });
          return { status: r.status, body: (await r.json()) as Answer['body'] };
        }),
      );
    const answers = await drive(rt.clock, resumeAll(100));

    const proceeded = answers.filter((a) => a.status === 200 && a.body.metadata?.cached !== true);
    const conflicts = answers.filter((a) => a.status === 409);
    const cached = answers.filter((a) => a.status === 200 && a.body.metadata?.cached === true);
    expect(proceeded).toHaveLength(1);
    expect(proceeded[0]?.body.metadata).toMatchObject({ turns: 18, wasResumed: true });
    expect(conflicts.length + cached.length).toBe(99);
    expect(conflicts.length).toBeGreaterThan(0);
    for (const c of conflicts) {
      expect(c.body).toMatchObject({ success: false, error: 'RUN_CONFLICT' });
      const holder = c.body.details?.holder ?? '';
      expect(holder).not.toBe('');
      expect(c.body.message).toContain(holder);
    }
    const resumed = (await rt.store.readEvents({ runId: jobId, limit: 10_000 })).filter(
      (e) => e.type === 'run:resumed',
    );
    expect(resumed).toHaveLength(1);
    expect(job.turnsPlayed()).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));

    // Once the job is done, a crowd of late resumes all get the cached result.
    const late = await resumeAll(20);
    expect(late.map((a) => [a.status, a.body.metadata?.cached, a.body.metadata?.wasResumed])).toEqual(
      Array.from({ length: 20 }, () => [200, true, false]),
    );
    expect(job.turnsPlayed()).toHaveLength(18);
  });
});
