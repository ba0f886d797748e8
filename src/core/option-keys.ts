import { type ErrorCode, ValidationError } from './errors.ts';

/**
 * The keys an options object may have, checked against its type: `optionKeys<TaskOptions>()(…)`
 * does not compile while a key of the type is missing from the list, so a new option cannot be
 * forgotten here and then refused at run time.
 */
export function optionKeys<T>() {
  return <const K extends ReadonlyArray<keyof T & string>>(
    ...keys: K &
      ([Exclude<keyof T & string, K[number]>] extends [never]
        ? unknown
        : { missing: Exclude<keyof T & string, K[number]> })
  ): readonly string[] => keys;
}

/**
 * Refuses a key that is not an option, naming it (`schedule.timzone`) and the nearest known key, so
 * a typo is an error instead of a silently ignored setting (a `timzone` delivered in UTC).
 */
export function refuseUnknownKeys(
  value: unknown,
  allowed: readonly string[],
  field: string,
  code: ErrorCode = 'INVALID_OPTION',
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (allowed.includes(key)) continue;
    const near = nearest(key, allowed);
    const path = field ? `${field}.${key}` : key;
    throw new ValidationError(path, `absent: the options are ${allowed.join(', ')}`, undefined, {
      code,
      message: `${path} is not an option${near ? ` (did you mean "${near}"?)` : ''}; the options are ${allowed.join(', ')}`,
      ...(near ? { data: { didYouMean: near } } : {}),
    });
  }
}

/** The allowed key within two edits (case-insensitive) of `key`, if there is exactly a closest one. */
function nearest(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of allowed) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] as number;
}
