import type { DateTime } from 'luxon';
import { parseEn } from './en-grammar.ts';
import { parseIso } from './iso.ts';
import { type Reading, resolveReading } from './reading.ts';
import { parseZh } from './zh-grammar.ts';

/** Reads one time expression against `now` (a DateTime in the user's zone). */

export type ExpressionKind = 'iso' | 'relative' | 'absolute';

export type ExpressionResult =
  | { ok: true; at: DateTime; kind: ExpressionKind }
  /** Not understood (`reason` says what, when known), or understood and impossible. */
  | { ok: false; reason: string | null; beyond?: false }
  /** Understood, but so far away that the calendar cannot hold it: past every horizon. */
  | { ok: false; beyond: true; reason: string };

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;

/** 'zh' when the text has CJK characters, else 'en'. */
export function detectLanguage(text: string): 'en' | 'zh' {
  return CJK.test(text) ? 'zh' : 'en';
}

/**
 * `grammar` reads the text with that language's grammar only (`baton parse-time --lang`); without
 * it the script decides (CJK characters → Chinese). ISO 8601 is read the same in both.
 */
export function readExpression(text: string, now: DateTime, grammar?: 'en' | 'zh'): ExpressionResult {
  const trimmed = text.normalize('NFKC').trim();
  if (trimmed === '') return { ok: false, reason: null };
  const iso = parseIso(trimmed, now.zone);
  if (iso === 'invalid') return { ok: false, reason: 'the date or time does not exist' };
  if (iso) return { ok: true, at: iso, kind: 'iso' };

  const zh = (grammar ?? detectLanguage(trimmed)) === 'zh';
  const reading: Reading | null = zh ? parseZh(trimmed) : parseEn(trimmed);
  const refused = !reading || reading.kind === 'rejected';
  if (refused && grammar !== undefined && grammar !== detectLanguage(trimmed)) {
    const why = reading?.kind === 'rejected' ? `: ${reading.reason}` : '';
    return { ok: false, reason: `read as ${grammar === 'zh' ? 'Chinese' : 'English'}, as asked${why}` };
  }
  if (!reading) return { ok: false, reason: null };
  if (reading.kind === 'rejected') return { ok: false, reason: reading.reason };
  const at = resolveReading(reading, now);
  if ('beyond' in at) return { ok: false, beyond: true, reason: 'too far in the future for a calendar' };
  if ('error' in at) return { ok: false, reason: at.error };
  return { ok: true, at, kind: reading.kind };
}
