/**
 * Small validators for options and inputs. Each throws a ValidationError that names the full field
 * path (`batch_config.batch_size_tokens`) and what was expected, so a bad config fails once, at the
 * edge, with a message a user can act on.
 */

import { type ErrorCode, ValidationError } from '../core/index.ts';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function expectObject(
  value: unknown,
  field: string,
  code: ErrorCode = 'INVALID_OPTION',
): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ValidationError(field, 'an object', value, { code });
  return value;
}

/** Rejects keys a config does not know, so a typo (`safety_margn`) is not silently ignored. */
export function rejectUnknownKeys(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  field: string,
  code: ErrorCode = 'INVALID_OPTION',
): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key))
      throw new ValidationError(`${field}.${key}`, `one of the known keys (${allowed.join(', ')})`, key, {
        code,
      });
  }
}

export function expectInteger(
  value: unknown,
  field: string,
  min: number,
  code: ErrorCode = 'INVALID_OPTION',
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new ValidationError(field, min === 0 ? 'a non-negative integer' : `an integer ≥ ${min}`, value, {
      code,
    });
  return value;
}

/** A number in (min, max] — ratios and margins, where 0 makes no sense and 1 means "all". */
export function expectRatio(value: unknown, field: string, code: ErrorCode = 'INVALID_OPTION'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1)
    throw new ValidationError(field, 'a number in (0, 1]', value, { code });
  return value;
}

export function expectOneOf<T extends string>(
  value: unknown,
  options: readonly T[],
  field: string,
  code: ErrorCode = 'INVALID_OPTION',
): T {
  if (typeof value !== 'string' || !(options as readonly string[]).includes(value))
    throw new ValidationError(field, `one of ${options.join(', ')}`, value, { code });
  return value as T;
}

export function expectStringArray(
  value: unknown,
  field: string,
  code: ErrorCode = 'INVALID_OPTION',
): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new ValidationError(field, 'an array of strings', value, { code });
  return [...value];
}

export function expectBoolean(value: unknown, field: string, code: ErrorCode = 'INVALID_OPTION'): boolean {
  if (typeof value !== 'boolean') throw new ValidationError(field, 'a boolean', value, { code });
  return value;
}
