/**
 * Logging across the thread boundary. The thread gets a real pino logger (so `ctx.log` has the full
 * `Logger` type, `child`, levels) whose destination posts each JSON line to the parent; the parent
 * writes it through the attempt's own logger, so lines carry the run's bindings once and go where
 * the engine's logs go.
 */
import type { Logger } from 'pino';
import { onFirstUse } from '../../deps/index.ts';

const loadPino = onFirstUse<typeof import('pino')>('pino');

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
type Level = (typeof LEVELS)[number];

function isLevel(value: unknown): value is Level {
  return typeof value === 'string' && (LEVELS as readonly string[]).includes(value);
}

/** The thread side: a pino logger at the parent's level that forwards every line. */
export function forwardingLogger(
  level: string,
  bindings: Record<string, unknown>,
  send: (line: string) => void,
): Logger {
  const root = loadPino().pino(
    {
      // Only the parent adds time, pid and host; the thread line is just the task's own fields.
      base: null,
      timestamp: false,
      level: isLevel(level) || level === 'silent' ? level : 'info',
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: send },
  );
  return root.child(bindings);
}

/**
 * The parent side: writes a forwarded line through `log`. The attempt's bindings (run id, task,
 * attempt) were added to the thread's logger too; they are dropped here because `log` adds them.
 */
export function writeForwardedLine(log: Logger, bindings: Record<string, unknown>, line: string): void {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return;
  }
  if (typeof entry !== 'object' || entry === null) return;
  const { level, msg, ...fields } = entry as Record<string, unknown>;
  const own = Object.fromEntries(
    Object.entries(fields).filter(([k, v]) => !(Object.hasOwn(bindings, k) && bindings[k] === v)),
  );
  const write = log[isLevel(level) ? level : 'info'].bind(log);
  if (typeof msg === 'string') write(own, msg);
  else write(own);
}

/** The logger's bindings as plain data (they cross into the thread). */
export function plainBindings(log: Logger): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(log.bindings())) as Record<string, unknown>;
  } catch {
    return {};
  }
}
