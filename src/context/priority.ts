/**
 * Priority levels (protocol 002 §6.3) and how a value or an array element gets one: an explicit
 * numeric `priority` field wins, else its type field (`atom_type`, `data_type`, `type`) looked up in
 * the data-type table (claim 1, evidence 2, methodology 2, background 3, metadata 3, citation 4,
 * raw text 4, instruction 1).
 */

import { isPlainObject } from './validate-options.ts';

export const PriorityLevelNames = {
  1: 'critical',
  2: 'important',
  3: 'supplementary',
  4: 'optional',
} as const;

export type PriorityLevel = keyof typeof PriorityLevelNames;

export function isPriorityLevel(value: unknown): value is PriorityLevel {
  return value === 1 || value === 2 || value === 3 || value === 4;
}

export interface PriorityLookup {
  /** Default priority of a data type, if the table gives one. */
  priorityOfType(dataType: string | undefined): PriorityLevel | undefined;
  /** Fields of an element that name its data type, tried in order. */
  elementTypeFields: readonly string[];
}

/** The priority of one array element, or undefined when it carries none. */
export function elementPriority(element: unknown, lookup: PriorityLookup): PriorityLevel | undefined {
  if (!isPlainObject(element)) return undefined;
  if (isPriorityLevel(element.priority)) return element.priority;
  for (const field of lookup.elementTypeFields) {
    const type = element[field];
    if (typeof type === 'string') {
      const p = lookup.priorityOfType(type);
      if (p !== undefined) return p;
    }
  }
  return undefined;
}

/** The protocol's filter text: "priority <= 2" for 1..n, else "priority in [1, 3]". */
export function describePriorityFilter(allowed: readonly PriorityLevel[]): string {
  const sorted = [...new Set(allowed)].sort((a, b) => a - b);
  const contiguousFromOne = sorted.every((p, i) => p === i + 1);
  return contiguousFromOne && sorted.length > 0
    ? `priority <= ${sorted[sorted.length - 1]}`
    : `priority in [${sorted.join(', ')}]`;
}

export interface PriorityFilterResult {
  value: unknown;
  /** Elements removed. Zero means the value is returned unchanged (same identity). */
  removed: number;
}

/**
 * Keeps the elements whose priority is allowed, in a top-level array or in the arrays one level down
 * in an object (`{ atoms: [...] }`). Elements without a priority are kept: the filter is about what
 * the data says of itself, and unlabelled data cannot be judged.
 */
export function filterByPriority(
  value: unknown,
  allowed: ReadonlySet<PriorityLevel>,
  lookup: PriorityLookup,
): PriorityFilterResult {
  const keep = (el: unknown) => {
    const p = elementPriority(el, lookup);
    return p === undefined || allowed.has(p);
  };
  if (Array.isArray(value)) {
    const kept = value.filter(keep);
    return kept.length === value.length
      ? { value, removed: 0 }
      : { value: kept, removed: value.length - kept.length };
  }
  if (!isPlainObject(value)) return { value, removed: 0 };
  let removed = 0;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (Array.isArray(field)) {
      const kept = field.filter(keep);
      removed += field.length - kept.length;
      out[key] = kept;
    } else out[key] = field;
  }
  return removed === 0 ? { value, removed: 0 } : { value: out, removed };
}

/** The distinct element priorities present in a value (top level or one level down). */
export function elementPriorities(value: unknown, lookup: PriorityLookup): Set<PriorityLevel> {
  const found = new Set<PriorityLevel>();
  const visit = (arr: unknown[]) => {
    for (const el of arr) {
      const p = elementPriority(el, lookup);
      if (p !== undefined) found.add(p);
    }
  };
  if (Array.isArray(value)) visit(value);
  else if (isPlainObject(value))
    for (const field of Object.values(value)) if (Array.isArray(field)) visit(field);
  return found;
}
