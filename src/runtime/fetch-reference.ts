/**
 * `ctx.fetch(reference)`: a task reads on demand what a data reference points at (protocol 002),
 * under its own permissions and its attempt's signal — including the reference and batched
 * transfers its input arrived as.
 */
import { BatonError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import { scopeOf } from './step-inputs.ts';

export async function fetchReference(
  engine: Engine,
  run: RunRecord,
  task: TaskDefinition,
  reference: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  let inner =
    typeof reference === 'object' && reference !== null && 'data_reference' in reference
      ? (reference as { data_reference: unknown }).data_reference
      : reference;
  // A transfer object as the task received it: full and summary carry their data; reference and
  // batched transfers are fetched whole from what they point at.
  if (typeof inner === 'object' && inner !== null && 'transfer_mode' in inner) {
    const t = inner as { transfer_mode: string; data?: unknown; reference?: Record<string, unknown> };
    if (t.transfer_mode === 'full' || t.transfer_mode === 'summary') return t.data;
    if (!t.reference)
      throw new BatonError(
        'REF_FORMAT_ERROR',
        `a ${t.transfer_mode} transfer without a reference cannot be fetched`,
      );
    const { available_paths: _paths, data_stats: _stats, ...ref } = t.reference;
    inner = ref;
  }
  const r = await engine.inputs.resolverFor(run).resolveReference(inner, {
    ...(task.permissions ? { permissions: task.permissions } : {}),
    scope: scopeOf(run),
    signal,
  });
  if (r.ok) return r.value;
  if (r.value !== undefined) return r.value;
  throw new BatonError(r.failure.error_code, r.failure.error_message, {
    data: { failure: { ...r.failure } },
  });
}
