/**
 * A task_output `filter` applied to what `path` selected: an array keeps the matching elements, a
 * single object is kept or dropped (null); after a wildcard path, the filter looks at the items the
 * path walked through (applyFilterAlongPath). Problems are REF_FILTER_ERROR, which the protocol's
 * default answers by ignoring the filter.
 *
 * Semantics, chosen to match SQL and the db_query conditions:
 * - `field` is an own key; if no such key exists, a dotted path (`metadata.source_section`).
 * - An element without the field never matches (also for `ne`), like NULL in SQL.
 * - Values of different JSON types never match (null is comparable with anything for eq/ne/in);
 *   ordering operators compare numbers with numbers and strings with strings (code-unit order).
 *   `contains` is substring for strings, membership for arrays.
 * - The filter is an error, not an empty result, when the field is missing from every element or
 *   no element holds a value of a comparable type: both mean the filter was written wrong.
 */
import { BatonError } from '../core/index.ts';
import type { Condition } from './reference-schema.ts';

const MISSING: unique symbol = Symbol('missing');

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function readField(item: unknown, field: string): unknown {
  if (!isPlainObject(item)) return MISSING;
  if (Object.hasOwn(item, field)) return item[field];
  if (!field.includes('.')) return MISSING;
  let cur: unknown = item;
  for (const part of field.split('.')) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, part)) return MISSING;
    cur = cur[part];
  }
  return cur;
}

const ORDERING = new Set(['gt', 'gte', 'lt', 'lte']);

const sameKind = (a: unknown, b: unknown) => a === null || b === null || typeof a === typeof b;

/** Whether a field value can be compared with the filter's value at all. */
function comparable(c: Condition, v: unknown): boolean {
  if (ORDERING.has(c.operator))
    return typeof v === typeof c.value && (typeof v === 'number' || typeof v === 'string');
  if (c.operator === 'contains') return typeof v === 'string' || Array.isArray(v);
  if (c.operator === 'in') {
    const list = c.value as unknown[];
    return list.length === 0 || list.some((x) => sameKind(x, v));
  }
  return sameKind(c.value, v);
}

function matches(c: Condition, v: unknown): boolean {
  switch (c.operator) {
    case 'eq':
      return v === c.value;
    case 'ne':
      return v !== c.value;
    case 'in':
      return (c.value as unknown[]).includes(v);
    case 'contains':
      return typeof v === 'string' ? v.includes(c.value as string) : Array.isArray(v) && v.includes(c.value);
    default: {
      if (!comparable(c, v)) return false;
      const a = v as number | string;
      const b = c.value as number | string;
      if (c.operator === 'gt') return a > b;
      if (c.operator === 'gte') return a >= b;
      if (c.operator === 'lt') return a < b;
      return a <= b;
    }
  }
}

function filterError(message: string, c: Condition): BatonError {
  return new BatonError('REF_FILTER_ERROR', message, { data: { field: 'filter', filter: c } });
}

export function applyFilter(selected: unknown, c: Condition): unknown {
  const items = Array.isArray(selected) ? selected : isPlainObject(selected) ? [selected] : undefined;
  if (!items)
    throw filterError(
      `filter needs an object or an array of objects to filter, got ${typeName(selected)}`,
      c,
    );
  if (items.length === 0) return selected;
  const values = items.map((item) => readField(item, c.field));
  const present = values.filter((v) => v !== MISSING);
  if (present.length === 0)
    throw filterError(
      `filter.field ${JSON.stringify(c.field)} is missing from ${Array.isArray(selected) ? 'every element' : 'the selected object'}`,
      c,
    );
  if (!present.some((v) => comparable(c, v)))
    throw filterError(
      `filter.value ${JSON.stringify(c.value)} cannot be compared by ${c.operator} with the ${typeName(present[0])} values of ${JSON.stringify(c.field)}`,
      c,
    );
  const kept = items.filter((_, i) => values[i] !== MISSING && matches(c, values[i]));
  if (Array.isArray(selected)) return kept;
  return kept.length > 0 ? selected : null;
}

/**
 * A filter over what a wildcard path walked through (protocol 002 §2.2: `$.atoms[*].content` with
 * `atom_type eq methodology` is the methodology atoms' content). For each selected value the item
 * the filter looks at is the nearest of the value itself and the containers the path passed
 * through on the way down that has the filter's field; the value is kept when that item matches.
 * A value with no such item never matches. Errors as applyFilter: the field is nowhere, or no
 * value found can be compared.
 */
export function applyFilterAlongPath(
  document: unknown,
  values: readonly unknown[],
  locations: ReadonlyArray<ReadonlyArray<string | number>>,
  c: Condition,
): unknown[] {
  if (values.length === 0) return [];
  const found = values.map((value, i) => fieldAlongPath(document, value, locations[i] ?? [], c.field));
  const present = found.filter((v) => v !== MISSING);
  if (present.length === 0)
    throw filterError(
      `filter.field ${JSON.stringify(c.field)} is missing from every selected value and every item the path walked through`,
      c,
    );
  if (!present.some((v) => comparable(c, v)))
    throw filterError(
      `filter.value ${JSON.stringify(c.value)} cannot be compared by ${c.operator} with the ${typeName(present[0])} values of ${JSON.stringify(c.field)}`,
      c,
    );
  return values.filter((_, i) => found[i] !== MISSING && matches(c, found[i]));
}

/** The field's value on the value itself, else on the nearest container above it on its path. */
function fieldAlongPath(
  document: unknown,
  value: unknown,
  location: ReadonlyArray<string | number>,
  field: string,
): unknown {
  const own = readField(value, field);
  if (own !== MISSING) return own;
  const chain: unknown[] = [document];
  let cur: unknown = document;
  for (const key of location.slice(0, -1)) {
    cur = (cur as Record<string | number, unknown>)[key];
    chain.push(cur);
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    const v = readField(chain[i], field);
    if (v !== MISSING) return v;
  }
  return MISSING;
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
