/**
 * The wire shape of protocol 002's `data_reference` (section 2) and `fallback_config` (section 3.2),
 * validated with zod. Field names are the protocol's, exactly; unknown fields are refused so a typo
 * (`"transfrom"`) is an error rather than a silently ignored option.
 */
import type { z } from 'zod';
import { fieldPath, ValidationError, valueAtPath } from '../core/index.ts';
import { lazySchema, schemasOnFirstUse, type Zod } from '../deps/index.ts';

export const FilterOperators = ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte', 'contains'] as const;
export type FilterOperator = (typeof FilterOperators)[number];

export const Transforms = ['none', 'summary', 'keys_only'] as const;
export type Transform = (typeof Transforms)[number];

export const FileFormats = ['pdf', 'md', 'json', 'txt'] as const;
export type FileFormat = (typeof FileFormats)[number];

export const FallbackStrategies = ['use_default', 'retry', 'skip', 'abort'] as const;
export type FallbackStrategy = (typeof FallbackStrategies)[number];

export type JsonScalar = string | number | boolean | null;

const isScalar = (v: unknown): v is JsonScalar =>
  v === null ||
  typeof v === 'string' ||
  typeof v === 'boolean' ||
  (typeof v === 'number' && Number.isFinite(v));

/** What each operator accepts as `value`; undefined when the value fits. */
export function conditionValueProblem(operator: FilterOperator, value: unknown): string | undefined {
  switch (operator) {
    case 'eq':
    case 'ne':
      return isScalar(value) ? undefined : 'a string, number, boolean or null';
    case 'in':
      return Array.isArray(value) && value.every(isScalar)
        ? undefined
        : 'an array of strings, numbers, booleans or nulls';
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
        ? undefined
        : 'a number or a string';
    case 'contains':
      return typeof value === 'string' ? undefined : 'a string';
  }
}

const RETRY_COUNT = 'an integer from 0 to 100';
const RETRY_DELAY = 'a number of milliseconds from 0 to 3600000';
export const RefTypes = ['task_output', 'file', 'db_query'] as const;
export type RefType = (typeof RefTypes)[number];

/** The schemas, built together the first time one is used (zod loads then, not at import). */
function buildSchemas(z: Zod) {
  const nonEmpty = (what = 'a non-empty string') => z.string({ error: what }).min(1, { error: what });

  // One `filter` of a task_output reference, or one of a db_query's `conditions`.
  const condition = z
    .strictObject({
      field: nonEmpty(),
      operator: z.enum(FilterOperators, { error: `one of ${FilterOperators.join(', ')}` }),
      value: z.unknown(),
    })
    .superRefine((c, ctx) => {
      const problem = conditionValueProblem(c.operator, c.value);
      if (problem)
        ctx.addIssue({ code: 'custom', path: ['value'], message: `${problem} for operator ${c.operator}` });
    });

  const fallbackConfig = z.strictObject({
    strategy: z.enum(FallbackStrategies, { error: `one of ${FallbackStrategies.join(', ')}` }),
    default_value: z.unknown().optional(),
    retry_count: z
      .int({ error: RETRY_COUNT })
      .min(0, { error: RETRY_COUNT })
      .max(100, { error: RETRY_COUNT })
      .default(3),
    retry_delay_ms: z
      .number({ error: RETRY_DELAY })
      .min(0, { error: RETRY_DELAY })
      .max(3_600_000, { error: RETRY_DELAY })
      .default(1000),
    // 'skip' is the default: Baton degrades to a partial input rather than failing the step.
    on_final_failure: z.enum(['skip', 'abort'], { error: 'skip or abort' }).default('skip'),
  });

  const fallback = { fallback_config: fallbackConfig.optional() };
  const noNul = (s: string) => !s.includes('\0');

  const taskOutputReference = z.strictObject({
    ref_type: z.literal('task_output'),
    task_id: nonEmpty(),
    path: nonEmpty('a JSONPath string starting with $').optional(),
    filter: condition.optional(),
    transform: z.enum(Transforms, { error: `one of ${Transforms.join(', ')}` }).optional(),
    ...fallback,
  });

  const fileReference = z.strictObject({
    ref_type: z.literal('file'),
    path: nonEmpty('a non-empty file path').refine(noNul, { error: 'a file path without NUL characters' }),
    format: z.enum(FileFormats, { error: `one of ${FileFormats.join(', ')}` }).optional(),
    encoding: nonEmpty('an encoding label such as utf-8').optional(),
    sections: z
      .array(nonEmpty(), { error: 'a non-empty array of section names' })
      .min(1, { error: 'a non-empty array of section names' })
      .optional(),
    ...fallback,
  });

  const dbQueryReference = z.strictObject({
    ref_type: z.literal('db_query'),
    table: nonEmpty('a declared table name'),
    conditions: z.array(condition, { error: 'an array of conditions' }).optional(),
    select: z
      .array(nonEmpty('a declared column name'), { error: 'a non-empty array of column names' })
      .min(1, { error: 'a non-empty array of column names' })
      .optional(),
    order_by: z
      .strictObject({
        field: nonEmpty('a declared column name'),
        direction: z.enum(['asc', 'desc'], { error: 'asc or desc' }).default('asc'),
      })
      .optional(),
    limit: z.int({ error: 'a positive integer' }).min(1, { error: 'a positive integer' }).optional(),
    ...fallback,
  });

  const dataReference = z.discriminatedUnion(
    'ref_type',
    [taskOutputReference, fileReference, dbQueryReference],
    { error: `one of ${RefTypes.join(', ')}` },
  );

  return { condition, fallbackConfig, taskOutputReference, fileReference, dbQueryReference, dataReference };
}

const schemas = schemasOnFirstUse(buildSchemas);

/** One `filter` of a task_output reference, or one of a db_query's `conditions`. */
export const conditionSchema = lazySchema(() => schemas().condition);
export type Condition = { field: string; operator: FilterOperator; value: unknown };
export const fallbackConfigSchema = lazySchema(() => schemas().fallbackConfig);
/** A validated `fallback_config` with the protocol's defaults filled in. */
export type FallbackConfig = z.output<typeof fallbackConfigSchema>;
/** A `fallback_config` as written, defaults optional. */
export type FallbackConfigInput = z.input<typeof fallbackConfigSchema>;
export const taskOutputReferenceSchema = lazySchema(() => schemas().taskOutputReference);
export const fileReferenceSchema = lazySchema(() => schemas().fileReference);
export const dbQueryReferenceSchema = lazySchema(() => schemas().dbQueryReference);
export const dataReferenceSchema = lazySchema(() => schemas().dataReference);

export type TaskOutputReference = z.output<typeof taskOutputReferenceSchema>;
export type FileReference = z.output<typeof fileReferenceSchema>;
export type DbQueryReference = z.output<typeof dbQueryReferenceSchema>;
/** A validated `data_reference` (defaults such as `order_by.direction` filled in). */
export type DataReference = z.output<typeof dataReferenceSchema>;

/**
 * Validates a raw `data_reference` object. Throws a ValidationError naming the field: code
 * REF_FILTER_ERROR when every problem is inside `filter` (the protocol lets a resolver ignore a bad
 * filter), REF_FORMAT_ERROR otherwise.
 */
export function parseDataReference(raw: unknown, field = 'data_reference'): DataReference {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ValidationError(field, 'an object with a ref_type', raw, { code: 'REF_FORMAT_ERROR' });
  const parsed = schemas().dataReference.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const onlyFilter = issues.every((i) => i.path[0] === 'filter');
  throw issueToError(issues[0]!, raw, field, onlyFilter ? 'REF_FILTER_ERROR' : 'REF_FORMAT_ERROR');
}

/** Validates a `fallback_config` given as an option (code INVALID_OPTION) or inside a reference. */
export function parseFallbackConfig(
  raw: unknown,
  field = 'fallback_config',
  code: 'INVALID_OPTION' | 'REF_FORMAT_ERROR' = 'INVALID_OPTION',
): FallbackConfig {
  const parsed = schemas().fallbackConfig.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw issueToError(parsed.error.issues[0]!, raw, field, code);
}

/** Validates a filter alone (code REF_FILTER_ERROR). */
export function parseCondition(raw: unknown, field: string): Condition {
  const parsed = schemas().condition.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw issueToError(parsed.error.issues[0]!, raw, field, 'REF_FILTER_ERROR');
}

type Issue = z.core.$ZodIssue;

function issueToError(
  issue: Issue,
  raw: unknown,
  field: string,
  code: 'REF_FORMAT_ERROR' | 'REF_FILTER_ERROR' | 'INVALID_OPTION',
): ValidationError {
  const at = fieldPath(field, issue.path);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    return new ValidationError(fieldPath(at, [key]), 'absent (not a field of this object)', undefined, {
      code,
    });
  }
  return new ValidationError(at, issue.message, valueAtPath(raw, issue.path), { code });
}
