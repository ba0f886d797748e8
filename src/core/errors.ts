/**
 * Baton's one error family. Every error carries a string `code` from the union below, its data in
 * readonly fields and its `cause`, and survives a round trip through JSON (checkpoints, the store,
 * HTTP bodies) via `serializeError` / `deserializeError`.
 */

export const ErrorCodes = [
  // input and configuration
  'INVALID_INPUT',
  'INVALID_OPTION',
  'PLAN_INVALID',
  'TASK_NOT_FOUND',
  // runs and the store
  'RUN_NOT_FOUND',
  'RUN_CONFLICT',
  'RUN_NOT_RESUMABLE',
  'LEASE_LOST',
  'CHECKPOINT_INVALID',
  'STORE_INVALID',
  'STORE_CORRUPT',
  'STORE_CLOSED',
  // the store cannot take writes now (a full disk, an I/O error); the work is retried later
  'STORE_UNAVAILABLE',
  // attempts
  'TIMEOUT',
  'CANCELLED',
  'NON_RETRIABLE',
  'RETRY_AFTER',
  'TASK_FAILED',
  'DEPENDENCY_FAILED',
  'DECISION_INVALID',
  // data references (protocol 002)
  'REF_NOT_FOUND',
  'REF_TIMEOUT',
  'REF_PERMISSION_DENIED',
  'REF_FORMAT_ERROR',
  'REF_PATH_INVALID',
  'REF_FILTER_ERROR',
  // context budgets
  'CONTEXT_OVERFLOW',
  // scheduled delivery (protocol 004)
  'TIME_EXPRESSION_INVALID',
  'TIMEZONE_INVALID',
  'SCHEDULE_NOT_SUPPORTED',
  'SCHEDULE_INVALID',
  'SCHEDULE_BEYOND_HORIZON',
  // LangGraph threads (baton/langgraph)
  'THREAD_NOT_FOUND',
  'THREAD_EXISTS',
  // anything that was not a BatonError when it was caught
  'UNKNOWN',
] as const;

/** One of ErrorCodes: what went wrong, stable across versions (branch on it, not on the message). */
export type ErrorCode = (typeof ErrorCodes)[number];

/** Options of a BatonError: the cause, structured data, and whether to keep the stack. */
export interface BatonErrorOptions {
  cause?: unknown;
  data?: Record<string, unknown>;
  /**
   * Leave out the stack trace. For conditions Baton detects itself (an attempt's deadline passing),
   * the stack shows only Baton's timer plumbing, and formatting it (through source maps under tsx)
   * costs more than the rest of recording a timeout.
   */
  stack?: false;
}

/** Every error Baton throws: a stable `code` (ErrorCodes), a message for people and optional `data`. */
export class BatonError extends Error {
  readonly code: ErrorCode;
  readonly data: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: BatonErrorOptions = {}) {
    const limit = Error.stackTraceLimit;
    // Not capturing is what makes it cheap: a thousand deadlines can pass in one millisecond.
    if (options.stack === false) Error.stackTraceLimit = 0;
    try {
      super(message, options.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
    this.data = Object.freeze({ ...(options.data ?? {}) });
  }

  override get name(): string {
    return this.constructor.name;
  }
}

/** Bad input: always names the field, what was expected and what was received. */
export class ValidationError extends BatonError {
  readonly field: string;
  readonly expected: string;

  constructor(
    field: string,
    expected: string,
    received?: unknown,
    options: BatonErrorOptions & { code?: ErrorCode; message?: string } = {},
  ) {
    const got = received === undefined ? '' : `, got ${describe(received)}`;
    super(options.code ?? 'INVALID_INPUT', options.message ?? `${field} must be ${expected}${got}`, {
      ...options,
      data: { ...options.data, field, expected },
    });
    this.field = field;
    this.expected = expected;
  }
}

/** Thrown by a task to stop retries at once. */
export class NonRetriableError extends BatonError {
  constructor(message: string, options: BatonErrorOptions = {}) {
    super('NON_RETRIABLE', message, options);
  }
}

/** Thrown by a task to ask for its next attempt no sooner than `retryAfterMs` from now. */
export class RetryAfterError extends BatonError {
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number, options: BatonErrorOptions = {}) {
    super('RETRY_AFTER', message, { ...options, data: { ...options.data, retryAfterMs } });
    this.retryAfterMs = retryAfterMs;
  }
}

export interface SerializedError {
  name: string;
  code: ErrorCode;
  message: string;
  data?: Record<string, unknown>;
  stack?: string;
  cause?: SerializedError;
}

const MAX_CAUSE_DEPTH = 8;

export function serializeError(err: unknown, depth = 0): SerializedError {
  if (isBatonError(err)) {
    return withCause(
      {
        name: err.name,
        code: err.code,
        message: err.message,
        ...(Object.keys(err.data).length > 0 ? { data: { ...err.data } } : {}),
        ...(err.stack ? { stack: err.stack } : {}),
      },
      err.cause,
      depth,
    );
  }
  if (err instanceof Error) {
    return withCause(
      {
        name: err.name,
        code: 'UNKNOWN',
        message: err.message,
        ...(err.stack ? { stack: err.stack } : {}),
      },
      err.cause,
      depth,
    );
  }
  return { name: 'Error', code: 'UNKNOWN', message: describe(err) };
}

function withCause(out: SerializedError, cause: unknown, depth: number): SerializedError {
  if (cause !== undefined && depth < MAX_CAUSE_DEPTH) out.cause = serializeError(cause, depth + 1);
  return out;
}

/** Rebuilds an error from its serialized form; the class is BatonError (or a known subclass). */
export function deserializeError(s: SerializedError): BatonError {
  const code = (ErrorCodes as readonly string[]).includes(s.code) ? s.code : 'UNKNOWN';
  const cause = s.cause ? deserializeError(s.cause) : undefined;
  const options = { ...(cause ? { cause } : {}), ...(s.data ? { data: s.data } : {}) };
  let err: BatonError;
  if (code === 'NON_RETRIABLE') err = new NonRetriableError(s.message, options);
  else if (code === 'RETRY_AFTER')
    err = new RetryAfterError(s.message, Number(s.data?.retryAfterMs ?? 0), options);
  else err = new BatonError(code, s.message, options);
  if (s.stack) err.stack = s.stack;
  return err;
}

/**
 * Structural, not `instanceof`: a task module loaded separately (the CLI imports flow files through
 * tsx, which gives them their own copy of Baton's modules) throws errors of another BatonError class.
 */
export function isBatonError(err: unknown, code?: ErrorCode): err is BatonError {
  if (!(err instanceof Error)) return false;
  const e = err as Partial<BatonError>;
  const looks =
    err instanceof BatonError ||
    (typeof e.code === 'string' &&
      (ErrorCodes as readonly string[]).includes(e.code) &&
      typeof e.data === 'object' &&
      e.data !== null);
  return looks && (code === undefined || e.code === code);
}

/** A short, safe description of a received value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') {
    const s = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(s);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return typeof value;
}
