import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import { BatonError, ValidationError } from '../core/index.ts';
import { onFirstUse } from '../deps/index.ts';
import { describeProblem } from './describe-problem.ts';

/**
 * Compiles a tool's JSON Schema once (at define time) into a function that lists every problem of
 * an argument object as `args.<path> must be …`. The dialect follows `$schema` (draft-07 when
 * absent; 2019-09 and 2020-12 too), because tool schemas come from MCP servers and LLM tool specs
 * written against either.
 */

/** A JSON Schema object (the tool's `inputSchema`). */
export type JsonSchemaObject = { readonly [key: string]: unknown };

/** Returns the problems of `args`, empty when they are valid. */
export type ArgsCheck = (args: unknown) => string[];

/** Past this many, the rest are counted, not listed: one bad array must not make a megabyte error. */
const MAX_PROBLEMS = 20;

// Each tool compiles with its own instance: schemas with the same `$id` in two tools must not
// collide, and a shared instance would keep every compiled schema alive. Checking a schema against
// its meta-schema is most of the cost of a fresh instance (≈10 of 12 ms), so that check is done by
// one checker per dialect, made on first use; it holds only the constant meta-schemas.
const OPTIONS: Options = {
  strict: false,
  allErrors: true,
  verbose: true,
  // Unknown formats (no ajv-formats installed) are ignored; without this Ajv warns on the console.
  logger: false,
};

// Ajv loads when the first tool schema is compiled, not when Baton is imported.
const ajv07 = onFirstUse<typeof import('ajv')>('ajv');
const ajv2019 = onFirstUse<typeof import('ajv/dist/2019.js')>('ajv/dist/2019.js');
const ajv2020 = onFirstUse<typeof import('ajv/dist/2020.js')>('ajv/dist/2020.js');

const DIALECTS = {
  'draft-07': (o: Options): Ajv => new (ajv07().Ajv)(o),
  '2019-09': (o: Options): Ajv => new (ajv2019().Ajv2019)(o),
  '2020-12': (o: Options): Ajv => new (ajv2020().Ajv2020)(o),
} as const;
type Dialect = keyof typeof DIALECTS;

const metaCheckers = new Map<Dialect, Ajv>();

function dialectOf(schema: JsonSchemaObject, field: string): Dialect {
  const uri = schema.$schema;
  if (uri === undefined) return 'draft-07';
  if (typeof uri === 'string') {
    if (/draft-07\/schema#?$/.test(uri)) return 'draft-07';
    if (/draft\/2019-09\/schema#?$/.test(uri)) return '2019-09';
    if (/draft\/2020-12\/schema#?$/.test(uri)) return '2020-12';
  }
  throw new ValidationError(
    `${field}.$schema`,
    'a JSON Schema dialect: draft-07 (the default when absent), 2019-09 or 2020-12',
    uri,
    { code: 'INVALID_OPTION' },
  );
}

function invalidSchema(field: string, detail: string, cause?: unknown): BatonError {
  return new BatonError('INVALID_OPTION', `${field} must be a valid JSON Schema: ${detail}`, {
    ...(cause !== undefined ? { cause } : {}),
    data: { field },
  });
}

function checkAgainstMetaSchema(schema: JsonSchemaObject, dialect: Dialect, field: string): void {
  let checker = metaCheckers.get(dialect);
  if (!checker) {
    checker = DIALECTS[dialect]({ ...OPTIONS, allErrors: false });
    metaCheckers.set(dialect, checker);
  }
  if (checker.validateSchema(schema) !== true)
    throw invalidSchema(
      field,
      `schema is invalid: ${checker.errorsText(checker.errors, { dataVar: 'schema' })}`,
    );
}

/**
 * Compiles `schema`; a schema Ajv refuses (bad keyword value, unresolved `$ref`) fails here with
 * INVALID_OPTION naming `field`, not in the middle of a run.
 */
export function compileArgsCheck(schema: JsonSchemaObject, field: string): ArgsCheck {
  const dialect = dialectOf(schema, field);
  checkAgainstMetaSchema(schema, dialect, field);
  let validate: ValidateFunction;
  try {
    validate = DIALECTS[dialect]({ ...OPTIONS, validateSchema: false }).compile(schema);
  } catch (err) {
    throw invalidSchema(field, (err as Error).message, err);
  }
  return (args) => {
    if (validate(args)) return [];
    return listProblems(validate.errors ?? [], args);
  };
}

function listProblems(errors: readonly ErrorObject[], args: unknown): string[] {
  const seen = new Set<string>();
  for (const e of errors) seen.add(describeProblem(e, args));
  const all = [...seen];
  if (all.length <= MAX_PROBLEMS) return all;
  return [...all.slice(0, MAX_PROBLEMS), `and ${all.length - MAX_PROBLEMS} more problems`];
}

/** The schema the arguments are checked against once `schedule` is taken off them. */
export function schemaWithoutSchedule(schema: JsonSchemaObject): JsonSchemaObject {
  const { properties, required } = schema;
  if (typeof properties !== 'object' || properties === null || !Object.hasOwn(properties, 'schedule'))
    return schema;
  const { schedule: _schedule, ...rest } = properties as Record<string, unknown>;
  return {
    ...schema,
    properties: rest,
    ...(Array.isArray(required) ? { required: required.filter((r) => r !== 'schedule') } : {}),
  };
}
