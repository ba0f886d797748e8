import { ValidationError } from './errors.ts';

/**
 * How deeply a value from outside (a run input, a decision answer, a request body, a plan) may
 * nest. JSON.stringify, zod and Baton's own walkers recurse, and how deep they can go depends on
 * how much stack the caller already used: 5,000 levels overflowed the CLI's stack. Real documents
 * stay far below this; anything deeper is refused with a clear error before it is stored.
 */
export const MAX_JSON_DEPTH = 512;

/**
 * Throws INVALID_INPUT (or `code`) naming `field` if `value` nests arrays or objects more than `max` levels
 * deep. Iterative, so the check itself cannot overflow. A shared sub-object counts at its deepest
 * position (JSON.stringify would repeat it there); it is walked again only when met deeper, so a
 * cycle ends as "too deep" and sharing cannot blow up the walk.
 */
export function assertJsonDepth(
  value: unknown,
  field: string,
  max = MAX_JSON_DEPTH,
  code: ValidationError['code'] = 'INVALID_INPUT',
): void {
  if (typeof value !== 'object' || value === null) return;
  const deepest = new Map<object, number>();
  const pending: Array<[object, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > max)
      throw new ValidationError(field, `nested at most ${max} levels deep (and without cycles)`, undefined, {
        code,
        data: { maxDepth: max },
      });
    if ((deepest.get(node) ?? 0) >= depth) continue;
    deepest.set(node, depth);
    for (const child of Array.isArray(node) ? node : Object.values(node))
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
  }
}
