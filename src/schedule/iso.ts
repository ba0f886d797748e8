import type { DateTime, Zone } from 'luxon';
import { luxon } from './luxon.ts';

/**
 * ISO 8601 date-times: "2025-10-30T15:00:00+08:00", "2025-10-30T15:00Z", "2016-12-16T12:23:59" (no
 * offset: read in the user's zone). A bare date ("2020-07-01") is left to the grammars, so it
 * means the same as "July 1 2020".
 */
const ISO = /^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?\s*(?:z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** The instant, `'invalid'` for an ISO-shaped text with impossible fields, or null when not ISO. */
export function parseIso(text: string, zone: Zone): DateTime | 'invalid' | null {
  if (!ISO.test(text)) return null;
  const iso = text
    .replace(/^(\S+)[tT ]/, '$1T')
    .replace(/\s+/g, '')
    .replace(/z$/, 'Z');
  const parsed = luxon().DateTime.fromISO(iso, { zone });
  return parsed.isValid ? parsed : 'invalid';
}
