/**
 * What the client throws for an HTTP error answer: a BatonError whose `code` is the server's when
 * it is one of Baton's codes (else UNKNOWN), with the HTTP status, the server's `error` string and
 * its `details` kept as they came.
 */
import { BatonError, type ErrorCode, ErrorCodes } from '../core/index.ts';

export class BatonHttpError extends BatonError {
  readonly status: number;
  /** The server's `error` field as sent (a Baton code, UNAUTHORIZED, BODY_TOO_LARGE, `<task>_timeout`, …). */
  readonly errorCode: string;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(status: number, errorCode: string, message: string, details?: Record<string, unknown>) {
    const code = (ErrorCodes as readonly string[]).includes(errorCode) ? (errorCode as ErrorCode) : 'UNKNOWN';
    super(code, message, { data: { status, error: errorCode, ...(details ? { details } : {}) } });
    this.status = status;
    this.errorCode = errorCode;
    this.details = details;
  }
}

/** Reads an error answer (the API's error shape, or anything else a proxy may send). */
export async function errorFromResponse(response: Response): Promise<BatonHttpError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown; details?: unknown };
    if (typeof body.error === 'string' && typeof body.message === 'string')
      return new BatonHttpError(
        response.status,
        body.error,
        body.message,
        typeof body.details === 'object' && body.details !== null
          ? (body.details as Record<string, unknown>)
          : undefined,
      );
  } catch {
    // Not JSON: a proxy's page, an empty body.
  }
  return new BatonHttpError(
    response.status,
    `HTTP_${response.status}`,
    `HTTP ${response.status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ''}`,
  );
}
