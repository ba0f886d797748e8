/**
 * The one error shape of the HTTP API, `{ success: false, error, message, details? }`, and the one
 * table from BatonError codes to HTTP statuses. `Record<ErrorCode, number>` makes the compiler
 * flag a code added to core without a status here.
 */
import { BatonError, type ErrorCode, isBatonError, ValidationError } from '../core/index.ts';

export interface ErrorBody {
  success: false;
  /** A BatonError code, an HTTP-layer code (HttpCodes) or the protocol's `<task>_timeout`. */
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  INVALID_INPUT: 400,
  INVALID_OPTION: 400,
  PLAN_INVALID: 400,
  TASK_NOT_FOUND: 400,
  RUN_NOT_FOUND: 404,
  RUN_CONFLICT: 409,
  // Expired runs are gone for good; 410 tells a client not to retry.
  RUN_NOT_RESUMABLE: 410,
  LEASE_LOST: 409,
  CHECKPOINT_INVALID: 422,
  STORE_INVALID: 500,
  STORE_CORRUPT: 500,
  STORE_CLOSED: 503,
  STORE_UNAVAILABLE: 503,
  TIMEOUT: 504,
  CANCELLED: 409,
  NON_RETRIABLE: 422,
  RETRY_AFTER: 503,
  TASK_FAILED: 422,
  DEPENDENCY_FAILED: 422,
  DECISION_INVALID: 400,
  REF_NOT_FOUND: 422,
  REF_TIMEOUT: 504,
  REF_PERMISSION_DENIED: 403,
  REF_FORMAT_ERROR: 422,
  REF_PATH_INVALID: 400,
  REF_FILTER_ERROR: 400,
  CONTEXT_OVERFLOW: 422,
  TIME_EXPRESSION_INVALID: 400,
  TIMEZONE_INVALID: 400,
  SCHEDULE_NOT_SUPPORTED: 400,
  SCHEDULE_INVALID: 400,
  SCHEDULE_BEYOND_HORIZON: 400,
  THREAD_NOT_FOUND: 404,
  THREAD_EXISTS: 409,
  UNKNOWN: 500,
};

/** Codes that exist only at the HTTP layer (core's ErrorCodes has no equivalent). */
export const HttpCodes = {
  unauthorized: 'UNAUTHORIZED',
  bodyTooLarge: 'BODY_TOO_LARGE',
  routeNotFound: 'ROUTE_NOT_FOUND',
  readOnly: 'READ_ONLY',
  hostNotAllowed: 'HOST_NOT_ALLOWED',
  originNotAllowed: 'ORIGIN_NOT_ALLOWED',
  unsupportedMediaType: 'UNSUPPORTED_MEDIA_TYPE',
} as const;

/**
 * An HTTP-layer refusal (401, 413, an unknown route): thrown inside a route and turned into the
 * error shape at once; it never leaves this module. Its BatonError code is the nearest family.
 */
export class HttpProblem extends BatonError {
  readonly status: number;
  readonly wireCode: string;

  constructor(status: number, wireCode: string, message: string, data: Record<string, unknown> = {}) {
    super('INVALID_INPUT', message, { data });
    this.status = status;
    this.wireCode = wireCode;
  }
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

export function statusOf(err: unknown): number {
  if (err instanceof HttpProblem) return err.status;
  if (isBatonError(err)) return STATUS_BY_CODE[err.code] ?? 500;
  return 500;
}

/** The error shape for anything thrown; internal errors keep their message but not their stack. */
export function errorBody(err: unknown): ErrorBody {
  if (err instanceof HttpProblem)
    return withDetails({ success: false, error: err.wireCode, message: err.message }, err.data);
  if (isBatonError(err)) {
    const details: Record<string, unknown> = { ...err.data };
    if (err instanceof ValidationError) details.field = err.field;
    return withDetails({ success: false, error: err.code, message: err.message }, details);
  }
  const message = err instanceof Error ? err.message : String(err);
  return { success: false, error: 'UNKNOWN', message: `internal error: ${message}` };
}

export function errorResponse(err: unknown): Response {
  const headers: Record<string, string> = {};
  if (err instanceof HttpProblem && err.status === 401) headers['www-authenticate'] = 'Bearer';
  return jsonResponse(errorBody(err), statusOf(err), headers);
}

function withDetails(body: ErrorBody, details: Readonly<Record<string, unknown>>): ErrorBody {
  return Object.keys(details).length > 0 ? { ...body, details: { ...details } } : body;
}
