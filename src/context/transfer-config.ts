/**
 * The protocol's `transfer_config` on a step (002 §7.1): `mode`, `max_tokens`, `priority_filter`,
 * `inline_preview_count`. Baton also accepts `summary_config` and `batch_config` here, so one step can
 * tune its summaries or batches without changing the planner's defaults.
 */

import type { ErrorCode } from '../core/index.ts';
import { ValidationError } from '../core/index.ts';
import { type BatchConfig, compileBatchConfig } from './batch-config.ts';
import { type TransferMode, TransferModes } from './choose-transfer-mode.ts';
import { isPriorityLevel, type PriorityLevel } from './priority.ts';
import { checkSummaryConfig, type SummaryConfig } from './summary-config.ts';
import { expectInteger, expectObject, expectOneOf, rejectUnknownKeys } from './validate-options.ts';

export interface TransferConfig {
  /** Forces a transfer mode, overriding the strategy tables. */
  mode?: TransferMode;
  /** Most tokens this input may take: caps a summary, shrinks a preview, bounds a batch. */
  max_tokens?: number;
  /** Keeps only data (inputs, and elements of array data) whose priority is listed. */
  priority_filter?: PriorityLevel[];
  /** Elements per collection in a reference's inline preview. @default 3 (the §4.3 example) */
  inline_preview_count?: number;
  summary_config?: SummaryConfig;
  batch_config?: Partial<BatchConfig>;
}

const KEYS = [
  'mode',
  'max_tokens',
  'priority_filter',
  'inline_preview_count',
  'summary_config',
  'batch_config',
];

export function checkTransferConfig(
  value: unknown,
  field: string,
  code: ErrorCode = 'INVALID_INPUT',
): TransferConfig {
  const obj = expectObject(value, field, code);
  rejectUnknownKeys(obj, KEYS, field, code);
  const out: TransferConfig = {};
  if (obj.mode !== undefined) out.mode = expectOneOf(obj.mode, TransferModes, `${field}.mode`, code);
  if (obj.max_tokens !== undefined)
    out.max_tokens = expectInteger(obj.max_tokens, `${field}.max_tokens`, 1, code);
  if (obj.priority_filter !== undefined) {
    const p = obj.priority_filter;
    if (!Array.isArray(p) || p.length === 0 || !p.every(isPriorityLevel))
      throw new ValidationError(`${field}.priority_filter`, 'a non-empty array of priority levels 1–4', p, {
        code,
      });
    out.priority_filter = [...p];
  }
  if (obj.inline_preview_count !== undefined)
    out.inline_preview_count = expectInteger(
      obj.inline_preview_count,
      `${field}.inline_preview_count`,
      0,
      code,
    );
  if (obj.summary_config !== undefined)
    out.summary_config = checkSummaryConfig(obj.summary_config, `${field}.summary_config`, code);
  if (obj.batch_config !== undefined) {
    compileBatchConfig(obj.batch_config, `${field}.batch_config`, undefined, code);
    out.batch_config = { ...(obj.batch_config as Partial<BatchConfig>) };
  }
  return out;
}
