import type { DateTime } from 'luxon';
import { parseWithChrono } from './chrono-fallback.ts';
import { parseEn } from './en-grammar.ts';
import { parseIso } from './iso.ts';
import { type Reading, resolveReading } from './reading.ts';
import { parseZh } from './zh-grammar.ts';

/** Reads one time expression against `now` (a DateTime in the user's zone). */

export type ExpressionKind = 'iso' | 'relative' | 'absolute';

export type ExpressionResult =
  | { ok: true; at: DateTime; kind: ExpressionKind }
  | { ok: false; reason: string | null };

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;

/** 'zh' when the text has CJK characters, else 'en'. */
export function detectLanguage(text: string): 'en' | 'zh' {
  return CJK.test(text) ? 'zh' : 'en';
}

/** Which readers run: the project uses all; the conformance report measures each alone. */
export interface ReaderOptions {
  /** @default true */
  grammar?: boolean;
  /** @default true */
  chrono?: boolean;
}

export function readExpression(text: string, now: DateTime, readers: ReaderOptions = {}): ExpressionResult {
  const trimmed = text.normalize('NFKC').trim();
  if (trimmed === '') return { ok: false, reason: null };
  const iso = parseIso(trimmed, now.zone);
  if (iso === 'invalid') return { ok: false, reason: 'the date or time does not exist' };
  if (iso) return { ok: true, at: iso, kind: 'iso' };

  if (readers.grammar !== false) {
    const reading: Reading | null = CJK.test(trimmed) ? parseZh(trimmed) : parseEn(trimmed);
    if (reading?.kind === 'rejected') return { ok: false, reason: reading.reason };
    if (reading) {
      const at = resolveReading(reading, now);
      if (!at) return { ok: false, reason: 'the date does not exist' };
      return { ok: true, at, kind: reading.kind };
    }
  }
  if (readers.chrono !== false && !CJK.test(trimmed)) {
    const at = parseWithChrono(trimmed, now);
    if (at) return { ok: true, at, kind: 'absolute' };
  }
  return { ok: false, reason: null };
}
