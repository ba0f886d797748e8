/**
 * W3C trace context as Baton keeps it with a run: the caller's `traceparent` (HTTP header or start
 * option) and the run span's own, so a process that takes the run back after a crash continues the
 * same trace. Pure string handling: no OpenTelemetry import, so the HTTP API can keep the header
 * at no cost when tracing is off.
 */

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface ParsedTraceparent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** A valid W3C `traceparent` (version 00, non-zero ids), or undefined. */
export function parseTraceparent(value: unknown): ParsedTraceparent | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m) return undefined;
  const [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

export function formatTraceparent(t: ParsedTraceparent): string {
  return `00-${t.traceId}-${t.spanId}-${t.traceFlags.toString(16).padStart(2, '0')}`;
}
