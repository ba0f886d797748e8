/**
 * task_output `transform`: `none`, `keys_only`, `summary`.
 *
 * The default `summary` is structural, not linguistic: it tells a downstream agent what is there
 * (types, counts, keys, the first few items, string lengths) without an LLM call. Inject
 * `summarize` in the resolver for a real summary (the context module's summarizers, say). Shape:
 * - string  → `{ summary_of: 'string', length, preview }` (first 200 characters)
 * - array   → `{ summary_of: 'array', total_items, item_types, item_keys?, first_items }`
 *             (`item_keys`: the union of object items' keys; `first_items`: 3, each abbreviated)
 * - object  → `{ summary_of: 'object', key_count, fields }` (first 50 keys, each abbreviated)
 * - number, boolean, null → the value itself.
 * Abbreviated: strings over 200 characters are cut with "…", arrays become
 * `{ summary_of: 'array', total_items }`, objects `{ summary_of: 'object', key_count, keys }`.
 */
import { BatonError } from '../core/index.ts';
import { typeName } from './filter-values.ts';
import type { Transform } from './reference-schema.ts';

export type Summarize = (value: unknown) => unknown | Promise<unknown>;

const PREVIEW_CHARS = 200;
const FIRST_ITEMS = 3;
const MAX_FIELDS = 50;
const MAX_KEYS = 20;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function cut(s: string): string {
  return s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS)}…` : s;
}

function abbreviate(v: unknown): unknown {
  if (typeof v === 'string') return cut(v);
  if (Array.isArray(v)) return { summary_of: 'array', total_items: v.length };
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    return { summary_of: 'object', key_count: keys.length, keys: keys.slice(0, MAX_KEYS) };
  }
  return v ?? null;
}

export function structuralSummary(value: unknown): unknown {
  if (typeof value === 'string') return { summary_of: 'string', length: value.length, preview: cut(value) };
  if (Array.isArray(value)) {
    const itemTypes: Record<string, number> = {};
    const itemKeys = new Set<string>();
    for (const item of value) {
      const t = typeName(item);
      itemTypes[t] = (itemTypes[t] ?? 0) + 1;
      if (isPlainObject(item)) for (const k of Object.keys(item)) itemKeys.add(k);
    }
    return {
      summary_of: 'array',
      total_items: value.length,
      item_types: itemTypes,
      ...(itemKeys.size > 0 ? { item_keys: [...itemKeys] } : {}),
      first_items: value.slice(0, FIRST_ITEMS).map(abbreviate),
    };
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    return {
      summary_of: 'object',
      key_count: keys.length,
      fields: Object.fromEntries(keys.slice(0, MAX_FIELDS).map((k) => [k, abbreviate(value[k])])),
    };
  }
  return value ?? null;
}

/** Keys of an object, or of each element of an array of objects; anything else is REF_FORMAT_ERROR. */
export function keysOnly(value: unknown): string[] | string[][] {
  if (isPlainObject(value)) return Object.keys(value);
  if (Array.isArray(value))
    return value.map((item, i) => {
      if (!isPlainObject(item))
        throw new BatonError(
          'REF_FORMAT_ERROR',
          `transform keys_only needs objects, but element ${i} is ${typeName(item)}`,
          { data: { field: 'transform' } },
        );
      return Object.keys(item);
    });
  throw new BatonError(
    'REF_FORMAT_ERROR',
    `transform keys_only needs an object or an array of objects, got ${typeName(value)}`,
    { data: { field: 'transform' } },
  );
}

export async function applyTransform(
  value: unknown,
  transform: Transform | undefined,
  summarize: Summarize = structuralSummary,
): Promise<unknown> {
  if (transform === undefined || transform === 'none') return value;
  if (transform === 'keys_only') return keysOnly(value);
  try {
    return await summarize(value);
  } catch (cause) {
    throw new BatonError(
      'REF_FORMAT_ERROR',
      `transform summary failed: ${(cause as Error)?.message ?? cause}`,
      {
        cause,
        data: { field: 'transform' },
      },
    );
  }
}
