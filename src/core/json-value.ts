import { ValidationError } from './errors.ts';
import { assertJsonDepth, MAX_JSON_DEPTH } from './json-depth.ts';

const KINDS = 'JSON values only (strings, finite numbers, booleans, null, arrays and plain objects)';

/**
 * Checks that `value` reads back as it was written once stored as JSON: nested at most
 * MAX_JSON_DEPTH levels (a cycle counts as too deep), and holding no undefined in an array (stored as null), no BigInt (JSON.stringify throws
 * a TypeError), no NaN or ±Infinity (stored as null), no function or symbol (silently dropped).
 * Objects with `toJSON` (a Date) are checked in their JSON form, which is what a replay sees.
 * Throws a ValidationError with `code` naming the field and the key that holds the bad value, so a
 * task learns at the call, not on its next attempt, that its state cannot be kept.
 */
export function assertJsonValue(value: unknown, field: string, code: ValidationError['code']): void {
  assertJsonDepth(value, field, MAX_JSON_DEPTH, code);
  const refuse = (key: string, what: string, cause?: unknown) =>
    new ValidationError(field, KINDS, undefined, {
      code,
      message: `${field} holds ${what}${key === '' ? '' : ` at key ${JSON.stringify(key)}`}: it can hold ${KINDS}`,
      ...(cause === undefined ? {} : { cause }),
      data: { key },
    });
  try {
    JSON.stringify(value, function (this: unknown, key, v: unknown) {
      // An array cannot drop a slot: undefined there would come back as null.
      if (v === undefined && Array.isArray(this)) throw refuse(key, 'undefined in an array');
      if (typeof v === 'bigint') throw refuse(key, 'a BigInt');
      if (typeof v === 'number' && !Number.isFinite(v)) throw refuse(key, String(v));
      if (typeof v === 'function' || typeof v === 'symbol') throw refuse(key, `a ${typeof v}`);
      return v;
    });
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    // A getter or toJSON that throws: the value cannot be written at all.
    throw refuse('', `a value that cannot be written as JSON (${(err as Error)?.message ?? err})`, err);
  }
}
