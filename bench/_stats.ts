/** Small statistics and temp-file helpers shared by the bench modules (not a bench itself: `_` prefix). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BenchMetric {
  metric: string;
  value: number;
  unit: string;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of no samples');
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Rounds to a few significant digits so results stay readable in the table and the JSON. */
export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

/**
 * A fresh directory under the OS temp dir (on this machine /tmp is the real ext4 disk, so fsync
 * costs what it costs in production), removed with everything in it when `fn` settles.
 */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `baton-bench-${prefix}-`));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
