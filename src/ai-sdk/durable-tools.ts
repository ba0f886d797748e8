/**
 * AI SDK tools under Baton's protocols: each call is a memoized step keyed by its tool-call id (a
 * resumed agent never runs a finished tool call again), runs under a per-agent timeout that grows
 * on retry (×2, then ×3, after waits of 5 s then 15 s inside the attempt: protocol 001's numbers), and when
 * the last try runs out of time the model gets the protocol's partial result — what a streaming
 * tool (`async *execute`) had yielded so far — instead of an error.
 */
import type { ToolSet } from 'ai';
import { ValidationError } from '../core/index.ts';
import type { TaskContext } from '../runtime/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';

export interface DurableToolOptions {
  /** The first try's timeout. @default '60s' */
  timeout?: Duration;
  /** Tries after the first. @default 2 */
  retries?: number;
  /** Timeout of retry n is timeout × multipliers[n-1]. @default [2, 3] */
  multipliers?: number[];
  /** Wait before retry n (inside the attempt, on the injected clock). @default ["5s", "15s"] */
  backoff?: Duration[];
  /** Per tool name, overriding the above. */
  perTool?: Record<string, Omit<DurableToolOptions, 'perTool'>>;
}

interface Resolved {
  timeoutMs: number;
  retries: number;
  multipliers: number[];
  backoffMs: number[];
}

function resolve(o: Omit<DurableToolOptions, 'perTool'>, field: string): Resolved {
  const retries = o.retries ?? 2;
  if (!Number.isInteger(retries) || retries < 0)
    throw new ValidationError(`${field}.retries`, 'a whole number ≥ 0', retries, { code: 'INVALID_OPTION' });
  const multipliers = o.multipliers ?? [2, 3];
  if (!multipliers.every((m) => typeof m === 'number' && m >= 1))
    throw new ValidationError(`${field}.multipliers`, 'numbers ≥ 1', multipliers, { code: 'INVALID_OPTION' });
  return {
    timeoutMs: parseDuration(o.timeout ?? '60s', `${field}.timeout`),
    retries,
    multipliers,
    backoffMs: (o.backoff ?? ['5s', '15s']).map((b, i) => parseDuration(b, `${field}.backoff[${i}]`)),
  };
}

/** The protocol's timeout result, handed to the model as the tool's output. */
export interface ToolTimeoutResult {
  status: 'timeout';
  partial: true;
  findings: unknown[];
  timed_out_at: string;
  timeout_ms: number;
  attempts: number;
  message: string;
}

const TIMED_OUT = Symbol('timed out');

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return v !== null && typeof v === 'object' && Symbol.asyncIterator in v;
}

/** Wraps every tool of a set that has an `execute`; others (client-side tools) pass unchanged. */
export function durableTools<T extends ToolSet>(
  ctx: TaskContext,
  tools: T,
  options: DurableToolOptions = {},
): T {
  const base = resolve(options, 'options');
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = (
      t as { execute?: (input: unknown, opts: { toolCallId: string; abortSignal?: AbortSignal }) => unknown }
    ).execute;
    if (!execute) {
      out[name] = t;
      continue;
    }
    const own = options.perTool?.[name];
    const settings = own ? resolve({ ...options, ...own }, `perTool.${name}`) : base;
    out[name] = {
      ...t,
      execute: (input: unknown, opts: { toolCallId: string; abortSignal?: AbortSignal }) =>
        ctx.step(`ai:tool:${name}:${opts.toolCallId}`, () =>
          runWithTimeouts(ctx, name, execute, input, opts, settings),
        ),
    };
  }
  return out as T;
}

async function runWithTimeouts(
  ctx: TaskContext,
  name: string,
  execute: (input: unknown, opts: { toolCallId: string; abortSignal?: AbortSignal }) => unknown,
  input: unknown,
  opts: { toolCallId: string; abortSignal?: AbortSignal },
  s: Resolved,
): Promise<unknown> {
  let findings: unknown[] = [];
  let timeoutMs = s.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    timeoutMs =
      attempt === 0
        ? s.timeoutMs
        : Math.round(s.timeoutMs * (s.multipliers[attempt - 1] ?? s.multipliers.at(-1) ?? 1));
    const controller = new AbortController();
    const onOuter = () => controller.abort(opts.abortSignal?.reason ?? ctx.signal.reason);
    opts.abortSignal?.addEventListener('abort', onOuter, { once: true });
    ctx.signal.addEventListener('abort', onOuter, { once: true });
    let timer: ReturnType<typeof ctx.clock.setTimer> | undefined;
    const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = ctx.clock.setTimer(timeoutMs, () => {
        controller.abort(new Error(`${name} timed out after ${timeoutMs} ms`));
        resolve(TIMED_OUT);
      });
    });
    const yielded: unknown[] = [];
    const work = (async () => {
      const r = execute(input, { ...opts, abortSignal: controller.signal });
      if (!isAsyncIterable(r)) return await r;
      // A streaming tool's yields are its partial results; its last one is its output.
      let last: unknown;
      for await (const v of r) {
        last = v;
        yielded.push(v);
      }
      return last;
    })();
    try {
      const result = await Promise.race([work, deadline]);
      if (result !== TIMED_OUT) return result;
      work.catch(() => {}); // it was told to stop; its late failure is not news
      if (yielded.length > 0) findings = [yielded.at(-1)];
      if (attempt >= s.retries) {
        return {
          status: 'timeout',
          partial: true,
          findings,
          timed_out_at: new Date(ctx.clock.now()).toISOString(),
          timeout_ms: timeoutMs,
          attempts: attempt + 1,
          message: `${name} timed out after ${attempt + 1} tries (last ${timeoutMs} ms)${findings.length ? '; these are its partial results' : ''}`,
        } satisfies ToolTimeoutResult;
      }
      await ctx.delay(s.backoffMs[attempt] ?? s.backoffMs.at(-1) ?? 0);
    } finally {
      if (timer !== undefined) ctx.clock.clearTimer(timer);
      opts.abortSignal?.removeEventListener('abort', onOuter);
      ctx.signal.removeEventListener('abort', onOuter);
    }
  }
}
