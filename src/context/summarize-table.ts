/**
 * Table summaries (protocol 002 §5.3: "保留表头+统计信息" — keep the header and statistics). A table is
 * an array of flat records, `{ columns | header, rows }`, or CSV / TSV / Markdown text. The summary
 * keeps the header, per-column statistics, and as many leading rows as the budget allows.
 */

import { isPlainObject } from './validate-options.ts';

export type ColumnStats =
  | { type: 'number'; count: number; missing: number; min: number; max: number; mean: number }
  | {
      type: 'string';
      count: number;
      missing: number;
      distinct: number;
      top?: Array<{ value: string; count: number }>;
    }
  | { type: 'boolean'; count: number; missing: number; true_count: number }
  | { type: 'mixed' | 'empty'; count: number; missing: number };

interface Table {
  header: string[];
  rows: unknown[][];
}

const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** The table inside a value, or undefined when it is not tabular. */
export function tableOf(value: unknown): Table | undefined {
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((r) => isPlainObject(r) && Object.values(r).every(isScalar))
  ) {
    const header: string[] = [];
    for (const row of value as Record<string, unknown>[])
      for (const k of Object.keys(row)) if (!header.includes(k)) header.push(k);
    return { header, rows: (value as Record<string, unknown>[]).map((r) => header.map((k) => r[k] ?? null)) };
  }
  if (isPlainObject(value)) {
    const header = value.columns ?? value.header;
    const rows = value.rows;
    if (
      Array.isArray(header) &&
      header.every((h) => typeof h === 'string') &&
      Array.isArray(rows) &&
      rows.every(Array.isArray)
    )
      return { header: header as string[], rows: rows as unknown[][] };
  }
  return undefined;
}

function statsOf(values: unknown[], withTop: boolean): ColumnStats {
  const present = values.filter((v) => v !== null && v !== undefined && v !== '');
  const base = { count: present.length, missing: values.length - present.length };
  if (present.length === 0) return { type: 'empty', ...base };
  if (present.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    const nums = present as number[];
    let min = nums[0]!;
    let max = nums[0]!;
    let sum = 0;
    for (const x of nums) {
      if (x < min) min = x;
      if (x > max) max = x;
      sum += x;
    }
    return { type: 'number', ...base, min, max, mean: Math.round((sum / nums.length) * 1e4) / 1e4 };
  }
  if (present.every((v) => typeof v === 'boolean'))
    return { type: 'boolean', ...base, true_count: present.filter((v) => v).length };
  if (present.every((v) => typeof v === 'string')) {
    const freq = new Map<string, number>();
    for (const v of present as string[]) freq.set(v, (freq.get(v) ?? 0) + 1);
    const top = [...freq.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([v, count]) => ({ value: v.length > 40 ? `${v.slice(0, 40)}…` : v, count }));
    return { type: 'string', ...base, distinct: freq.size, ...(withTop ? { top } : {}) };
  }
  return { type: 'mixed', ...base };
}

/** Largest n in [0, max] with fits(n), for monotone fits. */
function largestFitting(max: number, fits: (n: number) => boolean): number {
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface TableSummary {
  data: Record<string, unknown>;
  tokens: number;
}

export function summarizeTable(
  value: unknown,
  maxTokens: number,
  countValue: (v: unknown) => number,
): TableSummary | undefined {
  if (typeof value === 'string') return summarizeTextTable(value, maxTokens, countValue);
  const table = tableOf(value);
  if (!table) return undefined;
  const build = (n: number, withTop: boolean) => {
    const column_stats: Record<string, ColumnStats> = {};
    table.header.forEach((h, i) => {
      column_stats[h] = statsOf(
        table.rows.map((r) => r[i]),
        withTop,
      );
    });
    return {
      table_summary: { header: table.header, column_stats, sample_rows: table.rows.slice(0, n) },
      total_rows: table.rows.length,
      summarized_rows: n,
      omitted_fields: [] as string[],
    };
  };
  const withTop = countValue(build(0, true)) <= maxTokens;
  const n = largestFitting(table.rows.length, (m) => countValue(build(m, withTop)) <= maxTokens);
  const data = build(n, withTop);
  return { data, tokens: countValue(data) };
}

const SEPARATOR_ROW = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

function summarizeTextTable(
  text: string,
  maxTokens: number,
  countValue: (v: unknown) => number,
): TableSummary | undefined {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = lines[0];
  if (lines.length < 2 || header === undefined || !/[,|\t]/.test(header)) return undefined;
  const rows = lines.slice(1).filter((l) => !SEPARATOR_ROW.test(l));
  const build = (n: number) => ({
    table_summary: { header, sample_rows: rows.slice(0, n) },
    total_rows: rows.length,
    summarized_rows: n,
    omitted_fields: [] as string[],
  });
  const n = largestFitting(rows.length, (m) => countValue(build(m)) <= maxTokens);
  const data = build(n);
  return { data, tokens: countValue(data) };
}
