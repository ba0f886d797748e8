/** Printing for the CLI: exit codes, errors, JSON and short value previews. */
import { assertJsonDepth, BatonError, type ErrorCode, isBatonError, serializeError } from '../core/index.ts';

/**
 * 0 succeeded or partial · 1 failed, cancelled or expired · 2 bad input · 3 conflict · 4 waiting for
 * a decision nobody here can answer · 70 internal.
 */
export const ExitCode = { ok: 0, runFailed: 1, badInput: 2, conflict: 3, waiting: 4, internal: 70 } as const;

const BAD_INPUT: ReadonlySet<ErrorCode> = new Set([
  'INVALID_INPUT',
  'INVALID_OPTION',
  'PLAN_INVALID',
  'TASK_NOT_FOUND',
  'RUN_NOT_FOUND',
  'RUN_NOT_RESUMABLE',
  'STORE_INVALID',
  'STORE_CORRUPT',
  'TIME_EXPRESSION_INVALID',
  'TIMEZONE_INVALID',
  'SCHEDULE_INVALID',
  'SCHEDULE_BEYOND_HORIZON',
  'SCHEDULE_NOT_SUPPORTED',
  'DECISION_INVALID',
]);

export function exitCodeFor(err: unknown): number {
  if (isBatonError(err)) {
    if (BAD_INPUT.has(err.code)) return ExitCode.badInput;
    if (err.code === 'RUN_CONFLICT') return ExitCode.conflict;
  }
  return ExitCode.internal;
}

export function printError(err: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ ok: false, error: serializeError(err) }, (k, v) => (k === 'stack' ? undefined : v))}\n`,
    );
    return;
  }
  const code = isBatonError(err) ? err.code : 'UNKNOWN';
  process.stderr.write(`baton: ${code}: ${(err as Error).message ?? String(err)}\n`);
  if (!isBatonError(err) && process.env.BATON_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
}

export function parseJsonArg(value: string, field: string, readFile: (p: string) => string): unknown {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFile(value.slice(1));
    } catch (err) {
      throw new BatonError(
        'INVALID_INPUT',
        `${field} file ${value.slice(1)} cannot be read: ${(err as Error).message}`,
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `${field} is not valid JSON: ${(err as Error).message}`);
  }
  assertJsonDepth(parsed, field);
  return parsed;
}

export function preview(value: unknown, maxLines = 20): string {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const lines = text.split('\n');
  return lines.length <= maxLines
    ? text
    : `${lines.slice(0, maxLines).join('\n')}\n  … (${lines.length - maxLines} more lines; use --json for all)`;
}

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
