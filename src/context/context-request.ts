/** A planContext request and its validation, once, at the edge: every message names the field. */

import { ValidationError } from '../core/index.ts';
import { isPriorityLevel, type PriorityLevel } from './priority.ts';
import type { ReferenceInfo } from './reference-transfer.ts';
import { checkTransferConfig, type TransferConfig } from './transfer-config.ts';
import { isPlainObject } from './validate-options.ts';

export interface ContextInput {
  /** Unique within the step; the key in `total_input_data`. */
  name: string;
  value: unknown;
  /** §6.3 level. @default the data type's priority, else tables.defaultPriority */
  priority?: PriorityLevel;
  /** A row of the data-type table (text, code, table, claim, instruction, ...). */
  dataType?: string;
  /** The data_reference the value was resolved from; needed for reference transfers. */
  refInfo?: ReferenceInfo;
  /** Overrides the step's transfer_config for this input. */
  transferConfig?: TransferConfig;
}

export interface PlanContextRequest {
  taskId: string;
  agent: string;
  /** Row of the task-type table. @default agent */
  taskType?: string;
  inputs: readonly ContextInput[];
  transferConfig?: TransferConfig;
  signal?: AbortSignal;
  /** When §6.3 trimming runs. @default 'on_overflow' */
  trimming?: 'on_overflow' | 'always' | 'never';
}

export function checkContextRequest(req: PlanContextRequest): void {
  if (!isPlainObject(req)) throw new ValidationError('request', 'an object', req);
  if (typeof req.taskId !== 'string' || req.taskId === '')
    throw new ValidationError('taskId', 'a non-empty string', req.taskId);
  if (typeof req.agent !== 'string' || req.agent === '')
    throw new ValidationError('agent', 'a non-empty string', req.agent);
  if (!Array.isArray(req.inputs)) throw new ValidationError('inputs', 'an array', req.inputs);
  const names = new Set<string>();
  req.inputs.forEach((input, i) => {
    if (!isPlainObject(input)) throw new ValidationError(`inputs[${i}]`, 'an object', input);
    if (typeof input.name !== 'string' || input.name === '')
      throw new ValidationError(`inputs[${i}].name`, 'a non-empty string', input.name);
    if (names.has(input.name))
      throw new ValidationError(`inputs[${i}].name`, 'unique within the step', input.name);
    names.add(input.name);
    if (input.priority !== undefined && !isPriorityLevel(input.priority))
      throw new ValidationError(`inputs[${i}].priority`, '1, 2, 3 or 4', input.priority);
    if (input.dataType !== undefined && typeof input.dataType !== 'string')
      throw new ValidationError(`inputs[${i}].dataType`, 'a string', input.dataType);
    if (
      input.refInfo !== undefined &&
      (!isPlainObject(input.refInfo) || typeof input.refInfo.ref_type !== 'string')
    )
      throw new ValidationError(
        `inputs[${i}].refInfo`,
        'a data_reference with a string ref_type',
        input.refInfo,
      );
    if (input.transferConfig !== undefined)
      checkTransferConfig(input.transferConfig, `inputs[${i}].transferConfig`);
  });
  if (req.transferConfig !== undefined) checkTransferConfig(req.transferConfig, 'transferConfig');
}
