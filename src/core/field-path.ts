/** Field names for error messages from a path (zod issues, JSON pointers): `args.tags[1].name`. */

export function fieldPath(base: string, path: readonly PropertyKey[]): string {
  let out = base;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${String(p)}`;
  return out;
}

/** The value at a path of own properties, or undefined when any step is missing. */
export function valueAtPath(raw: unknown, path: readonly PropertyKey[]): unknown {
  let cur = raw;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, p)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}
