/** A plain-text table for the bench harness: left-aligned text, right-aligned numbers. */
export type Row = readonly string[];

const NUMERIC = /^-?[\d,]+(\.\d+)?x?$/;

export function formatTable(header: Row, rows: readonly Row[]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: Row) =>
    r
      .map((cell, c) => (NUMERIC.test(cell) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
