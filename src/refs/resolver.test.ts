import { describe, expect, it } from 'vitest';
import { BatonError, isBatonError } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import { resolutionFailureSchema } from './resolution-failure.ts';
import { createResolver } from './resolver.ts';
import type { GetTaskOutput } from './task-output.ts';

const never = () => new Promise<never>(() => {});

function setup(getTaskOutput: GetTaskOutput, timeoutMs?: number) {
  const clock = new ManualClock('2026-02-03T10:30:00Z');
  const resolver = createResolver({ clock, getTaskOutput, ...(timeoutMs ? { timeoutMs } : {}) });
  return { clock, resolver };
}

/** Succeeds on the nth call; earlier calls report a pending task. */
function readyOnCall(n: number) {
  const calls: number[] = [];
  const get: GetTaskOutput = async () => {
    calls.push(calls.length + 1);
    return calls.length >= n ? { status: 'succeeded', output: { x: 1 } } : { status: 'pending' };
  };
  return { get, calls };
}

describe('failure records', () => {
  it('match the protocol shape and take their timestamp from the clock', async () => {
    const { resolver } = setup(async () => ({ status: 'missing' }));
    const r = await resolver.resolveReference({ ref_type: 'task_output', task_id: 'task_scholar_001' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(resolutionFailureSchema.parse(r.failure)).toEqual({
      ref_type: 'task_output',
      task_id: 'task_scholar_001',
      error_code: 'REF_NOT_FOUND',
      error_message: 'no task with id "task_scholar_001"',
      fallback_strategy: 'use_default',
      fallback_value: null,
      timestamp: '2026-02-03T10:30:00.000Z',
      attempts: 1,
    });
  });
});

describe('retry', () => {
  it('waits retry_delay_ms on the clock between attempts and succeeds when the target appears', async () => {
    const { get, calls } = readyOnCall(3);
    const { clock, resolver } = setup(get);
    const fallback = { strategy: 'retry', retry_count: 3, retry_delay_ms: 500 } as const;
    const p = resolver.resolveReference({ ref_type: 'task_output', task_id: 't' }, { fallback });
    await clock.advance(499);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    await clock.advance(500);
    expect(await p).toEqual({ ok: true, value: { x: 1 }, attempts: 3 });
  });

  it('after retry_count retries takes on_final_failure: skip', async () => {
    const { get, calls } = readyOnCall(99);
    const { clock, resolver } = setup(get);
    const fallback = {
      strategy: 'retry',
      retry_count: 2,
      retry_delay_ms: 100,
      on_final_failure: 'skip',
    } as const;
    const p = resolver.resolveReference({ ref_type: 'task_output', task_id: 't' }, { fallback });
    await clock.advance(1000);
    const r = await p;
    expect(calls).toHaveLength(3);
    expect(r).toMatchObject({
      ok: false,
      skipped: true,
      failure: { fallback_strategy: 'skip', attempts: 3 },
    });
  });

  it('after retry_count retries takes on_final_failure: abort, throwing the code and the record', async () => {
    const { get } = readyOnCall(99);
    const { clock, resolver } = setup(get);
    const fallback = {
      strategy: 'retry',
      retry_count: 1,
      retry_delay_ms: 10,
      on_final_failure: 'abort',
    } as const;
    const p = resolver.resolveReference({ ref_type: 'task_output', task_id: 't' }, { fallback });
    const settled = p.catch((e: unknown) => e);
    await clock.advance(10);
    const err = await settled;
    expect(isBatonError(err, 'REF_NOT_FOUND')).toBe(true);
    expect((err as BatonError).data.failure).toMatchObject({ fallback_strategy: 'abort', attempts: 2 });
  });

  it("prefers the reference's fallback_config to the step's", async () => {
    const { get } = readyOnCall(99);
    const { resolver } = setup(get);
    const r = await resolver.resolveReference(
      {
        ref_type: 'task_output',
        task_id: 't',
        fallback_config: { strategy: 'use_default', default_value: [] },
      },
      { fallback: { strategy: 'abort' } },
    );
    expect(r).toMatchObject({
      ok: false,
      value: [],
      failure: { fallback_strategy: 'use_default', fallback_value: [] },
    });
  });

  it("applies the step's fallback_config when the reference has none", async () => {
    const { resolver } = setup(async () => ({ status: 'missing' }));
    const p = resolver.resolveReference(
      { ref_type: 'task_output', task_id: 't' },
      { fallback: { strategy: 'abort' } },
    );
    await expect(p).rejects.toMatchObject({ code: 'REF_NOT_FOUND' });
  });

  it('refuses an invalid step fallback with INVALID_OPTION naming the field', async () => {
    const { resolver } = setup(async () => ({ status: 'missing' }));
    const p = resolver.resolveReference(
      { ref_type: 'task_output', task_id: 't' },
      { fallback: { strategy: 'retry', retry_count: -1 } },
    );
    await expect(p).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'fallback.retry_count' });
  });
});

describe('timeouts', () => {
  it('an attempt past timeoutMs is REF_TIMEOUT; the default retries 3 times 1 s apart, then skips', async () => {
    let calls = 0;
    const { clock, resolver } = setup(() => {
      calls++;
      return never();
    }, 2000);
    const p = resolver.resolveReference({ ref_type: 'task_output', task_id: 'slow' });
    await clock.advance(2000); // the first attempt times out
    expect(calls).toBe(1);
    await clock.advance(1000); // retry_delay_ms, then the second attempt starts
    expect(calls).toBe(2);
    await clock.advance(2 * 3000 + 2000); // two more delays and attempts, the last timing out
    const r = await p;
    expect(calls).toBe(4);
    expect(r).toMatchObject({
      ok: false,
      skipped: true,
      failure: { error_code: 'REF_TIMEOUT', fallback_strategy: 'skip', attempts: 4 },
    });
    expect(clock.pendingTimers).toBe(0);
  });

  it('passes an abort signal to getTaskOutput that fires on timeout', async () => {
    let seen: AbortSignal | undefined;
    const { clock, resolver } = setup((_id, { signal }) => {
      seen = signal;
      return never();
    }, 100);
    const p = resolver.resolveReference(
      { ref_type: 'task_output', task_id: 't' },
      { fallback: { strategy: 'skip' } },
    );
    await clock.advance(100);
    await p;
    expect(seen?.aborted).toBe(true);
    expect(isBatonError(seen?.reason, 'REF_TIMEOUT')).toBe(true);
  });

  it("rejects with the caller's reason when the caller cancels, without a failure record", async () => {
    const { resolver } = setup(() => never(), 100_000);
    const ctl = new AbortController();
    const p = resolver.resolveReference({ ref_type: 'task_output', task_id: 't' }, { signal: ctl.signal });
    ctl.abort(new BatonError('CANCELLED', 'step cancelled'));
    await expect(p).rejects.toMatchObject({ code: 'CANCELLED' });
  });
});

describe('invalid references', () => {
  it.each([
    [{ ref_type: 'task_output' }, 'data_reference.task_id'],
    [{ ref_type: 'url', url: 'x' }, 'data_reference.ref_type'],
    [{ ref_type: 'task_output', task_id: 't', transfrom: 'none' }, 'data_reference.transfrom'],
    [{ ref_type: 'file', path: 'a.md', format: 'docx' }, 'data_reference.format'],
    [{ ref_type: 'db_query', table: 'papers', limit: 0 }, 'data_reference.limit'],
    ['task_scholar_001', 'data_reference'],
  ])('%j aborts with REF_FORMAT_ERROR naming %s', async (raw, field) => {
    const { resolver } = setup(async () => ({ status: 'missing' }));
    const err = await resolver.resolveReference(raw).catch((e: unknown) => e);
    expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
    expect((err as BatonError).message).toContain(`${field} must be`);
    expect((err as BatonError).data.failure).toMatchObject({ error_code: 'REF_FORMAT_ERROR', attempts: 1 });
  });

  it('is not retried even when the step asks for retries', async () => {
    const { resolver } = setup(async () => ({ status: 'missing' }));
    const r = await resolver.resolveReference(
      { ref_type: 'task_output' },
      { fallback: { strategy: 'retry', retry_count: 5, on_final_failure: 'skip' } },
    );
    expect(r).toMatchObject({ ok: false, skipped: true, attempts: 1 });
  });
});

describe('resolveInput', () => {
  const outputs: Record<string, unknown> = {
    task_scholar_001: {
      atoms: [
        { atom_type: 'claim', c: 1 },
        { atom_type: 'evidence', c: 2 },
      ],
    },
    task_validator_001: { validation_results: ['ok'] },
  };
  const get: GetTaskOutput = async (id) =>
    id in outputs ? { status: 'succeeded', output: outputs[id] } : { status: 'missing' };

  it('replaces every reference in the protocol 7.1 input form and reports sizes and failures', async () => {
    const { resolver } = setup(get);
    const input = {
      data_references: [
        { ref_type: 'task_output', task_id: 'task_scholar_001', path: "$.atoms[?(@.atom_type=='claim')]" },
        { ref_type: 'task_output', task_id: 'task_validator_001', path: '$.validation_results' },
        { ref_type: 'task_output', task_id: 'gone', fallback_config: { strategy: 'skip' } },
      ],
      transfer_config: { mode: 'reference', inline_preview_count: 5 },
      notes: { data_reference: { ref_type: 'task_output', task_id: 'gone' } },
    };
    const out = await resolver.resolveInput(input);
    expect(out.input).toEqual({
      data_references: [[{ atom_type: 'claim', c: 1 }], ['ok']],
      transfer_config: { mode: 'reference', inline_preview_count: 5 },
      notes: null,
    });
    expect(out.failures.map((f) => f.fallback_strategy)).toEqual(['skip', 'use_default']);
    expect(out.resolved.map((r) => [r.pointer.join('/'), r.bytes, r.skipped ?? false])).toEqual([
      ['data_references/0', JSON.stringify([{ atom_type: 'claim', c: 1 }]).length, false],
      ['data_references/1', JSON.stringify(['ok']).length, false],
      ['data_references/2', 0, true],
      ['notes', 4, false],
    ]);
    expect(input.data_references).toHaveLength(3); // the original is untouched
  });

  it('throws the first aborting reference in input order', async () => {
    const { resolver } = setup(get);
    const input = {
      a: {
        data_reference: { ref_type: 'task_output', task_id: 'gone', fallback_config: { strategy: 'abort' } },
      },
      b: { data_reference: { ref_type: 'file', path: '../../etc/passwd' } },
    };
    await expect(resolver.resolveInput(input)).rejects.toMatchObject({ code: 'REF_NOT_FOUND' });
  });

  it('names an invalid field by its place in the input', async () => {
    const { resolver } = setup(get);
    const input = {
      data_references: [{ ref_type: 'task_output', task_id: 'task_scholar_001' }, { ref_type: 'file' }],
    };
    await expect(resolver.resolveInput(input)).rejects.toThrow(/^input\.data_references\[1\]\.path must be/);
  });

  it('reports each validated reference, its filter included', async () => {
    const { resolver } = setup(get);
    const filter = { field: 'atom_type', operator: 'eq', value: 'claim' };
    const out = await resolver.resolveInput({
      x: {
        data_reference: { ref_type: 'task_output', task_id: 'task_scholar_001', path: '$.atoms', filter },
      },
    });
    expect(out.resolved[0]?.ref).toEqual({
      ref_type: 'task_output',
      task_id: 'task_scholar_001',
      path: '$.atoms',
      filter,
    });
    expect(out.input).toEqual({ x: [{ atom_type: 'claim', c: 1 }] });
  });

  it('refuses a wrapper with extra keys as REF_FORMAT_ERROR', async () => {
    const { resolver } = setup(get);
    const input = { x: { data_reference: { ref_type: 'task_output', task_id: 'gone' }, note: 'hi' } };
    await expect(resolver.resolveInput(input)).rejects.toMatchObject({ code: 'REF_FORMAT_ERROR' });
  });
});
