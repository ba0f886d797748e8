/**
 * Resolves a task_output reference: fetch the output, select with `path`, filter, transform.
 *
 * Value shape: without `path` the whole output; with a singular path (names and indices only,
 * like `$.atoms` or `$.metadata.quality_score`) the one selected value, and REF_NOT_FOUND when it
 * selects nothing; with any other path (wildcards, filters, slices, descendants) the array of
 * selected values, possibly empty.
 *
 * A filter selects among the items the path walked through: after `$.atoms[*].content` the filter
 * `atom_type eq methodology` keeps the content of the methodology atoms (protocol 002 §2.2).
 *
 * Soft failures carry the value the protocol's default falls back to: REF_PATH_INVALID the full
 * output (transformed, not filtered: the filter was written for the path's selection);
 * REF_FILTER_ERROR the unfiltered selection (transformed).
 */
import { BatonError } from '../core/index.ts';
import { applyFilter, applyFilterAlongPath } from './filter-values.ts';
import type { JsonPathEvaluator } from './jsonpath-query.ts';
import type { TaskOutputReference } from './reference-schema.ts';
import { applyTransform, type Summarize } from './transform-values.ts';

/** Statuses whose output may be read; partial outputs are what Baton hands on after a timeout. */
export const ReadableTaskStatuses = ['succeeded', 'partial'] as const;

export interface TaskOutputRecord {
  /** 'succeeded' | 'partial' | 'pending' | 'missing' | 'failed' | … (only the first two are read) */
  status: string;
  output?: unknown;
  /**
   * Whose output it is (Baton: the run's root run id). A scoped record is read only by a
   * resolution with the same scope, or one permitted `runs: "any"`.
   */
  scope?: string;
}

export type GetTaskOutput = (taskId: string, ctx: { signal: AbortSignal }) => Promise<TaskOutputRecord>;

export interface TaskOutputDeps {
  getTaskOutput: GetTaskOutput;
  jsonPath: JsonPathEvaluator;
  summarize?: Summarize | undefined;
  /** The resolution's scope (see ResolveOptions.scope): null reads any, undefined no scoped record. */
  scope: string | null | undefined;
}

/** A failure that still has a value for the protocol's default strategy to use. */
export class SoftFailure extends BatonError {
  constructor(
    error: BatonError,
    readonly fallbackValue: unknown,
  ) {
    super(error.code, error.message, { cause: error.cause, data: { ...error.data } });
  }
}

async function fetchOutput(ref: TaskOutputReference, deps: TaskOutputDeps, signal: AbortSignal) {
  let record: TaskOutputRecord;
  try {
    record = await deps.getTaskOutput(ref.task_id, { signal });
  } catch (cause) {
    if (signal.aborted) throw signal.reason;
    throw new BatonError('REF_NOT_FOUND', `output of task ${JSON.stringify(ref.task_id)} could not be read`, {
      cause,
      data: { task_id: ref.task_id },
    });
  }
  const status = record?.status;
  if (status === 'missing')
    throw new BatonError('REF_NOT_FOUND', `no task with id ${JSON.stringify(ref.task_id)}`, {
      data: { task_id: ref.task_id, status },
    });
  // Checked before the status: a run of another flow is refused whatever state it is in.
  if (record.scope !== undefined && deps.scope !== null && record.scope !== deps.scope)
    throw new BatonError(
      'REF_PERMISSION_DENIED',
      `task_output reference to ${JSON.stringify(ref.task_id)} refused: that run belongs to another flow, and a task reads only the outputs of its own flow's runs (grant permissions.runs "any" to read across flows)`,
      { data: { field: 'task_id', task_id: ref.task_id } },
    );
  if (!(ReadableTaskStatuses as readonly string[]).includes(status))
    throw new BatonError(
      'REF_NOT_FOUND',
      `task ${JSON.stringify(ref.task_id)} has no output to read (status ${String(status)})`,
      { data: { task_id: ref.task_id, status } },
    );
  if (record.output === undefined)
    throw new BatonError('REF_NOT_FOUND', `task ${JSON.stringify(ref.task_id)} ${status} without an output`, {
      data: { task_id: ref.task_id, status },
    });
  return record.output;
}

/** `filterError`: the reference's filter was malformed; it is reported here, softly, once selected. */
export async function resolveTaskOutput(
  ref: TaskOutputReference,
  filterError: BatonError | undefined,
  deps: TaskOutputDeps,
  signal: AbortSignal,
): Promise<unknown> {
  const output = await fetchOutput(ref, deps, signal);
  let selected: unknown = output;
  // Set for a non-singular path: the filter then applies along the path (see applyFilterAlongPath).
  let walked: ReturnType<JsonPathEvaluator['select']> | undefined;
  if (ref.path !== undefined) {
    let selection: ReturnType<JsonPathEvaluator['select']>;
    try {
      selection = deps.jsonPath.select(ref.path, output);
    } catch (err) {
      if (!(err instanceof BatonError)) throw err;
      throw new SoftFailure(err, await applyTransform(output, ref.transform, deps.summarize));
    }
    if (selection.singular) {
      if (selection.values.length === 0)
        throw new BatonError(
          'REF_NOT_FOUND',
          `path ${JSON.stringify(ref.path)} selects nothing in the output of task ${JSON.stringify(ref.task_id)}`,
          { data: { task_id: ref.task_id, path: ref.path } },
        );
      selected = selection.values[0];
    } else {
      selected = selection.values;
      walked = selection;
    }
  }
  if (filterError)
    throw new SoftFailure(filterError, await applyTransform(selected, ref.transform, deps.summarize));
  if (ref.filter) {
    try {
      selected = walked
        ? applyFilterAlongPath(output, walked.values, walked.locations, ref.filter)
        : applyFilter(selected, ref.filter);
    } catch (err) {
      if (!(err instanceof BatonError) || err.code !== 'REF_FILTER_ERROR') throw err;
      throw new SoftFailure(err, await applyTransform(selected, ref.transform, deps.summarize));
    }
  }
  return applyTransform(selected, ref.transform, deps.summarize);
}
