/**
 * The protocol's strategy tables (002 §5.1–5.3, §6.3 default priorities) as configurable data. How
 * they combine is decided in choose-transfer-mode.ts; this file only holds and validates them.
 */

import { ValidationError } from '../core/index.ts';
import { isPriorityLevel, type PriorityLevel } from './priority.ts';
import {
  expectInteger,
  expectObject,
  expectOneOf,
  expectStringArray,
  rejectUnknownKeys,
} from './validate-options.ts';

/** What a table may recommend. Batching is never a table entry: only size leads there. */
export const TableModes = ['full', 'summary', 'reference'] as const;
export type TableMode = (typeof TableModes)[number];

/** How a data type is compressed when it is summarized (§5.3, column "压缩方法"). */
export const CompressionMethods = [
  'none',
  'extractive',
  'table_stats',
  'key_data_points',
  'on_demand',
] as const;
export type CompressionMethod = (typeof CompressionMethods)[number];

export interface DataTypeRule {
  /** §5.3 recommended strategy. */
  mode?: TableMode;
  /** §5.3 compression method. @default 'extractive' */
  method?: CompressionMethod;
  /** §6.3 default priority. */
  priority?: PriorityLevel;
  /** False for data a summary would destroy (code, formulas): it is referenced instead. @default true */
  compressible?: boolean;
  /** Always passed in full, whatever the size, task or transfer_config ("必须完整传递"). @default false */
  keepFull?: boolean;
}

export interface SizeThresholds {
  /** Below this many tokens: full. @default 2000 */
  fullBelow: number;
  /** Below this (and not full): summary; from here up to `batchedAbove`: reference + preview. @default 10000 */
  summaryBelow: number;
  /** Above this: batched references. @default 50000 */
  batchedAbove: number;
}

export interface TransferTables {
  sizeThresholds: SizeThresholds;
  /** §5.2: downstream task type (agent) → the strategy it needs. */
  taskTypes: Readonly<Record<string, TableMode>>;
  /** §5.3 and §6.3 merged: one vocabulary of data types. */
  dataTypes: Readonly<Record<string, DataTypeRule>>;
  /** Priority of an input whose type has none. @default 2 (important: summarized, never dropped) */
  defaultPriority: PriorityLevel;
  /** Element fields that name its data type, for per-element priorities. @default ['atom_type', 'data_type', 'type'] */
  elementTypeFields: readonly string[];
}

export interface TransferTablesOptions {
  sizeThresholds?: Partial<SizeThresholds>;
  /** Merged over the defaults by key; `null` removes a default row. */
  taskTypes?: Record<string, TableMode | null>;
  /** Merged over the defaults by key; `null` removes a default row. */
  dataTypes?: Record<string, DataTypeRule | null>;
  defaultPriority?: PriorityLevel;
  elementTypeFields?: readonly string[];
}

const INSTRUCTION: DataTypeRule = {
  mode: 'full',
  method: 'none',
  priority: 1,
  keepFull: true,
  compressible: false,
};

export const DEFAULT_TRANSFER_TABLES: TransferTables = {
  sizeThresholds: { fullBelow: 2_000, summaryBelow: 10_000, batchedAbove: 50_000 },
  taskTypes: {
    Scholar: 'full',
    Code: 'full',
    Validator: 'summary',
    Knowledge_Vault: 'reference',
    Strategic_Critic: 'summary',
    Orchestrator: 'summary',
  },
  dataTypes: {
    // §5.3
    text: { mode: 'summary', method: 'extractive' },
    code: { mode: 'full', method: 'none', compressible: false },
    formula: { mode: 'full', method: 'none', compressible: false },
    table: { mode: 'summary', method: 'table_stats' },
    chart: { mode: 'summary', method: 'key_data_points' },
    metadata: { mode: 'full', method: 'none', priority: 3 },
    relation_graph: { mode: 'reference', method: 'on_demand' },
    // §6.3
    instruction: INSTRUCTION,
    system_prompt: INSTRUCTION,
    claim: { priority: 1 },
    evidence: { priority: 2 },
    methodology: { priority: 2 },
    background: { priority: 3 },
    citation: { priority: 4 },
    raw_text: { priority: 4, method: 'extractive' },
  },
  defaultPriority: 2,
  elementTypeFields: ['atom_type', 'data_type', 'type'],
};

const RULE_KEYS = ['mode', 'method', 'priority', 'compressible', 'keepFull'] as const;

function checkRule(value: unknown, field: string): DataTypeRule {
  const obj = expectObject(value, field);
  rejectUnknownKeys(obj, RULE_KEYS, field);
  const rule: DataTypeRule = {};
  if (obj.mode !== undefined) rule.mode = expectOneOf(obj.mode, TableModes, `${field}.mode`);
  if (obj.method !== undefined) rule.method = expectOneOf(obj.method, CompressionMethods, `${field}.method`);
  if (obj.priority !== undefined) {
    if (!isPriorityLevel(obj.priority))
      throw new ValidationError(`${field}.priority`, '1, 2, 3 or 4', obj.priority, {
        code: 'INVALID_OPTION',
      });
    rule.priority = obj.priority;
  }
  for (const flag of ['compressible', 'keepFull'] as const) {
    if (obj[flag] === undefined) continue;
    if (typeof obj[flag] !== 'boolean')
      throw new ValidationError(`${field}.${flag}`, 'a boolean', obj[flag], { code: 'INVALID_OPTION' });
    rule[flag] = obj[flag];
  }
  return rule;
}

function mergeRows<T>(
  defaults: Readonly<Record<string, T>>,
  given: unknown,
  field: string,
  check: (v: unknown, f: string) => T,
): Record<string, T> {
  const out: Record<string, T> = { ...defaults };
  if (given === undefined) return out;
  for (const [key, row] of Object.entries(expectObject(given, field))) {
    if (row === null) delete out[key];
    else out[key] = check(row, `${field}.${key}`);
  }
  return out;
}

/** Validates table overrides once and merges them over the protocol's defaults. */
export function compileTransferTables(options: TransferTablesOptions = {}): TransferTables {
  const obj = expectObject(options, 'tables');
  rejectUnknownKeys(
    obj,
    ['sizeThresholds', 'taskTypes', 'dataTypes', 'defaultPriority', 'elementTypeFields'],
    'tables',
  );
  const t = expectObject(options.sizeThresholds ?? {}, 'tables.sizeThresholds');
  rejectUnknownKeys(t, ['fullBelow', 'summaryBelow', 'batchedAbove'], 'tables.sizeThresholds');
  const d = DEFAULT_TRANSFER_TABLES.sizeThresholds;
  const sizeThresholds: SizeThresholds = {
    fullBelow:
      t.fullBelow === undefined
        ? d.fullBelow
        : expectInteger(t.fullBelow, 'tables.sizeThresholds.fullBelow', 0),
    summaryBelow:
      t.summaryBelow === undefined
        ? d.summaryBelow
        : expectInteger(t.summaryBelow, 'tables.sizeThresholds.summaryBelow', 0),
    batchedAbove:
      t.batchedAbove === undefined
        ? d.batchedAbove
        : expectInteger(t.batchedAbove, 'tables.sizeThresholds.batchedAbove', 0),
  };
  if (
    !(
      sizeThresholds.fullBelow <= sizeThresholds.summaryBelow &&
      sizeThresholds.summaryBelow <= sizeThresholds.batchedAbove
    )
  )
    throw new ValidationError(
      'tables.sizeThresholds',
      'fullBelow ≤ summaryBelow ≤ batchedAbove',
      `${sizeThresholds.fullBelow}, ${sizeThresholds.summaryBelow}, ${sizeThresholds.batchedAbove}`,
      { code: 'INVALID_OPTION' },
    );
  const defaultPriority = options.defaultPriority ?? DEFAULT_TRANSFER_TABLES.defaultPriority;
  if (!isPriorityLevel(defaultPriority))
    throw new ValidationError('tables.defaultPriority', '1, 2, 3 or 4', defaultPriority, {
      code: 'INVALID_OPTION',
    });
  return {
    sizeThresholds,
    taskTypes: mergeRows(DEFAULT_TRANSFER_TABLES.taskTypes, options.taskTypes, 'tables.taskTypes', (v, f) =>
      expectOneOf(v, TableModes, f),
    ),
    dataTypes: mergeRows(DEFAULT_TRANSFER_TABLES.dataTypes, options.dataTypes, 'tables.dataTypes', checkRule),
    defaultPriority,
    elementTypeFields:
      options.elementTypeFields === undefined
        ? DEFAULT_TRANSFER_TABLES.elementTypeFields
        : expectStringArray(options.elementTypeFields, 'tables.elementTypeFields'),
  };
}
