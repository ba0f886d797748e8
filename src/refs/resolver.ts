/**
 * The resolver: one `data_reference` (or every reference in a step's input) to its value.
 *
 * One resolution runs attempts. An attempt parses the reference and reads its target under the
 * per-attempt time limit (REF_TIMEOUT past it). When an attempt fails, its error code picks a plan:
 * the reference's `fallback_config`, else the step's, else the protocol's default for that code.
 * `retry` sleeps `retry_delay_ms` on the injected clock and tries again, up to `retry_count` more
 * times (a reference that cannot be parsed is not retried), then takes `on_final_failure`. The
 * final strategy decides the result: `use_default` → its value, `skip` → removed from the input,
 * `abort` → a thrown BatonError carrying the failure record, `return_full_data` / `ignore_filter`
 * → the value the failing step still had. Every failure yields one `resolution_failure` record.
 */
import { BatonError, isBatonError } from '../core/index.ts';
import type { Clock } from '../time/index.ts';
import { resolveFile } from './file-reference.ts';
import {
  fieldOf,
  findRawReferences,
  type Pointer,
  pointerKey,
  SKIPPED,
  substituteReferences,
} from './find-references.ts';
import { JsonPathEvaluator } from './jsonpath-query.ts';
import {
  type Condition,
  type DataReference,
  parseCondition,
  parseDataReference,
} from './reference-schema.ts';
import {
  type AppliedStrategy,
  fallbackPlanFor,
  isRefErrorCode,
  type RefErrorCode,
  type ResolutionFailure,
} from './resolution-failure.ts';
import {
  type CheckedOptions,
  type CheckedResolveOptions,
  checkResolveOptions,
  checkResolverOptions,
  type ResolveOptions,
  type ResolverOptions,
} from './resolver-options.ts';
import { resolveDbQuery } from './sql-query.ts';
import { resolveTaskOutput, SoftFailure } from './task-output.ts';

export type Resolution =
  | { ok: true; value: unknown; attempts: number }
  | { ok: false; failure: ResolutionFailure; value?: unknown; skipped?: true; attempts: number };

export interface ResolvedReference {
  pointer: Pointer;
  /** The validated reference; undefined when it could not be parsed. */
  ref: DataReference | undefined;
  /** UTF-8 size of the value put into the input (JSON text; raw text for strings); 0 if skipped. */
  bytes: number;
  failure?: ResolutionFailure;
  skipped?: true;
}

export interface ResolvedInput {
  /** A new input with every reference replaced by its value (skipped ones removed). */
  input: unknown;
  failures: ResolutionFailure[];
  resolved: ResolvedReference[];
}

export interface Resolver {
  /** Resolves one reference (the object inside `data_reference`, as written). */
  resolveReference(ref: unknown, opts?: ResolveOptions): Promise<Resolution>;
  /** Resolves every reference in a step's input, concurrently; throws the first abort in input order. */
  resolveInput(input: unknown, opts?: ResolveOptions): Promise<ResolvedInput>;
}

export function createResolver(options: ResolverOptions): Resolver {
  return new RefResolver(checkResolverOptions(options));
}

/** A reference as the resolver sees it: validated, or the error that stopped validation. */
type Parsed = { refType: string; taskId?: string } & (
  | { ok: true; ref: DataReference; filterError?: BatonError }
  | { ok: false; error: BatonError }
);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parse(raw: unknown, field: string, problem: BatonError | undefined): Parsed {
  const refType = isPlainObject(raw) && typeof raw.ref_type === 'string' ? raw.ref_type : 'unknown';
  const taskId = isPlainObject(raw) && typeof raw.task_id === 'string' ? raw.task_id : undefined;
  const base = { refType, ...(taskId === undefined ? {} : { taskId }) };
  if (problem) return { ...base, ok: false, error: problem };
  // A bad task_output filter is REF_FILTER_ERROR, which the protocol answers by ignoring the
  // filter, so it must not stop the rest of the reference from being validated and resolved.
  let rest = raw;
  let filter: Condition | undefined;
  let filterError: BatonError | undefined;
  if (isPlainObject(raw) && raw.ref_type === 'task_output' && Object.hasOwn(raw, 'filter')) {
    const { filter: rawFilter, ...others } = raw;
    rest = others;
    try {
      filter = parseCondition(rawFilter, `${field}.filter`);
    } catch (err) {
      filterError = toRefError(err);
    }
  }
  try {
    const parsed = parseDataReference(rest, field);
    const ref = filter && parsed.ref_type === 'task_output' ? { ...parsed, filter } : parsed;
    return { ...base, ok: true, ref, ...(filterError ? { filterError } : {}) };
  } catch (err) {
    return { ...base, ok: false, error: toRefError(err) };
  }
}

function toRefError(err: unknown): BatonError {
  if (isBatonError(err) && isRefErrorCode(err.code)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new BatonError('REF_FORMAT_ERROR', `reference could not be resolved: ${message}`, { cause: err });
}

export function byteSize(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value);
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

class RefResolver implements Resolver {
  private readonly jsonPath = new JsonPathEvaluator();

  constructor(private readonly o: CheckedOptions) {}

  async resolveReference(ref: unknown, opts?: ResolveOptions): Promise<Resolution> {
    return (await this.resolve(ref, 'data_reference', undefined, checkResolveOptions(opts))).resolution;
  }

  async resolveInput(input: unknown, opts?: ResolveOptions): Promise<ResolvedInput> {
    const checked = checkResolveOptions(opts);
    const found = findRawReferences(input);
    const settled = await Promise.allSettled(
      found.map((f) => this.resolve(f.raw, fieldOf(f.pointer), f.problem, checked)),
    );
    const rejected = settled.find((s) => s.status === 'rejected');
    if (rejected) throw (rejected as PromiseRejectedResult).reason;
    const values = new Map<string, unknown>();
    const failures: ResolutionFailure[] = [];
    const resolved = found.map((f, i): ResolvedReference => {
      const { resolution, ref } = (
        settled[i] as PromiseFulfilledResult<{ resolution: Resolution; ref?: DataReference }>
      ).value;
      const skipped = !resolution.ok && resolution.skipped === true;
      values.set(pointerKey(f.pointer), skipped ? SKIPPED : resolution.value);
      if (!resolution.ok) failures.push(resolution.failure);
      return {
        pointer: f.pointer,
        ref,
        bytes: skipped ? 0 : byteSize(resolution.value),
        ...(resolution.ok ? {} : { failure: resolution.failure }),
        ...(skipped ? { skipped: true as const } : {}),
      };
    });
    return { input: substituteReferences(input, values), failures, resolved };
  }

  private async resolve(
    raw: unknown,
    field: string,
    problem: BatonError | undefined,
    opts: CheckedResolveOptions,
  ): Promise<{ resolution: Resolution; ref?: DataReference }> {
    const parsed = parse(raw, field, problem);
    const config = (parsed.ok ? parsed.ref.fallback_config : undefined) ?? opts.fallback;
    const withRef = (resolution: Resolution) => ({ resolution, ...(parsed.ok ? { ref: parsed.ref } : {}) });
    for (let attempts = 1; ; attempts++) {
      let error: BatonError;
      let soft: SoftFailure | undefined;
      if (!parsed.ok) error = parsed.error;
      else {
        try {
          const value = await runWithTimeout(
            this.o.clock,
            this.o.timeoutMs,
            (signal) => this.attempt(parsed.ref, parsed.filterError, opts, signal),
            opts.signal,
          );
          return withRef({ ok: true, value, attempts });
        } catch (err) {
          if (opts.signal?.aborted) throw opts.signal.reason;
          error = toRefError(err);
          if (err instanceof SoftFailure) soft = err;
        }
      }
      const code = error.code as RefErrorCode;
      const plan = fallbackPlanFor(code, config);
      // A reference that cannot be parsed fails the same way every time: no retries.
      if (plan.strategy === 'retry' && parsed.ok && attempts <= plan.retryCount) {
        await this.o.clock.sleep(plan.retryDelayMs, opts.signal);
        continue;
      }
      let strategy: AppliedStrategy = plan.strategy === 'retry' ? plan.onFinalFailure : plan.strategy;
      // The protocol's two "keep what you have" defaults need a value; without one, use null.
      if ((strategy === 'return_full_data' || strategy === 'ignore_filter') && !soft)
        strategy = 'use_default';
      const failure: ResolutionFailure = {
        ref_type: parsed.refType,
        ...(parsed.taskId === undefined ? {} : { task_id: parsed.taskId }),
        error_code: code,
        error_message: error.message,
        fallback_strategy: strategy,
        fallback_value: strategy === 'use_default' ? plan.defaultValue : null,
        timestamp: new Date(this.o.clock.now()).toISOString(),
        attempts,
      };
      if (strategy === 'abort')
        throw new BatonError(code, error.message, { cause: error, data: { ...error.data, failure } });
      if (strategy === 'skip') return withRef({ ok: false, failure, skipped: true, attempts });
      const value = strategy === 'use_default' ? plan.defaultValue : soft?.fallbackValue;
      return withRef({ ok: false, failure, value, attempts });
    }
  }

  private attempt(
    ref: DataReference,
    filterError: BatonError | undefined,
    opts: CheckedResolveOptions,
    signal: AbortSignal,
  ) {
    const o = this.o;
    switch (ref.ref_type) {
      case 'task_output':
        return resolveTaskOutput(
          ref,
          filterError,
          {
            getTaskOutput: o.getTaskOutput,
            jsonPath: this.jsonPath,
            summarize: o.summarize,
            scope: opts.scope,
          },
          signal,
        );
      case 'file':
        if (!o.workspace)
          throw new BatonError('REF_PERMISSION_DENIED', 'no workspace is configured for file references', {
            data: { field: 'path' },
          });
        return resolveFile(ref, o.workspace, opts.roots, signal);
      case 'db_query':
        return resolveDbQuery(ref, o.catalog, o.sql, {
          maxLimit: o.maxQueryLimit,
          permittedTables: opts.tables,
          scope: opts.scope,
        });
    }
  }
}

/** Runs one attempt under the time limit; the caller's signal and the limit both abort it. */
export function runWithTimeout<T>(
  clock: Clock,
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<T>,
  parent: AbortSignal | undefined,
): Promise<T> {
  if (parent?.aborted) return Promise.reject(parent.reason);
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const onParentAbort = () => {
      controller.abort(parent?.reason);
      reject(parent?.reason);
    };
    const timer = clock.setTimer(timeoutMs, () => {
      const err = new BatonError('REF_TIMEOUT', `reference not resolved within ${timeoutMs} ms`, {
        data: { timeoutMs },
      });
      controller.abort(err);
      reject(err);
    });
    parent?.addEventListener('abort', onParentAbort, { once: true });
    Promise.resolve()
      .then(() => run(controller.signal))
      .then(resolve, reject)
      .finally(() => {
        clock.clearTimer(timer);
        parent?.removeEventListener('abort', onParentAbort);
      });
  });
}
