import { addPart, type DurationParts, type DurationUnit } from './duration-parts.ts';

/**
 * English durations on normalized text: "5 minutes", "an hour and a half", "1.5 hours",
 * "half an hour", "1 day 2 hours", "a fortnight", "90s", "2h30m", "4 business days".
 */

const UNIT_WORDS: ReadonlyArray<[string, DurationUnit | 'businessDays']> = [
  ['(?:business|working)\\s+days?|weekdays', 'businessDays'],
  ['seconds?|secs?', 'seconds'],
  ['minutes?|mins?', 'minutes'],
  ['hours?|hrs?', 'hours'],
  ['days?', 'days'],
  ['weeks?|wks?', 'weeks'],
  ['fortnights?', 'weeks'],
  ['months?|mos?', 'months'],
  ['years?|yrs?', 'years'],
];
const GLUED: Readonly<Record<string, DurationUnit>> = {
  s: 'seconds',
  m: 'minutes',
  h: 'hours',
  d: 'days',
  w: 'weeks',
  y: 'years',
};

const UNIT = UNIT_WORDS.map(([w]) => `(?:${w})`).join('|');
const HALF = '(?:and\\s+)?(?:a\\s+)?half';
/** One part: "5 minutes", "an hour and a half", "1 and a half hours", "half an hour", "2h". */
const PART_SOURCE = `(?:(?<![a-z0-9.])|(?<=\\d[smhdwy]))(?:(?:\\d+(?:\\.\\d+)?|an?|one)\\s*(?:${HALF}\\s+)?(?:${UNIT})\\b(?:\\s+${HALF}\\b)?|half\\s+(?:an?\\s+)?(?:${UNIT})\\b|\\d+(?:\\.\\d+)?[smhdwy](?![a-z]))`;
/** A duration: parts joined by spaces, commas or "and". */
export const DURATION_SOURCE = `${PART_SOURCE}(?:\\s*(?:,|and)?\\s*${PART_SOURCE})*`;

const PART = new RegExp(PART_SOURCE, 'g');
const UNIT_RES = UNIT_WORDS.map(([w, unit]) => [new RegExp(`^(?:${w})$`), unit] as const);

export interface EnglishDuration {
  parts: DurationParts;
  businessDays?: number;
}

function unitOf(word: string): DurationUnit | 'businessDays' | null {
  for (const [re, unit] of UNIT_RES) if (re.test(word)) return unit;
  return null;
}

/** Reads a text matched by DURATION_SOURCE. */
export function readEnglishDuration(text: string): EnglishDuration | null {
  const out: EnglishDuration = { parts: {} };
  for (const m of text.matchAll(PART)) {
    const part = m[0];
    const glued = /^(\d+(?:\.\d+)?)([smhdwy])$/.exec(part.trim());
    if (glued) {
      addPart(out.parts, Number(glued[1]), GLUED[glued[2] as string] as DurationUnit);
      continue;
    }
    const half = /\bhalf\b/.test(part);
    const amount = /^(\d+(?:\.\d+)?)/.exec(part);
    let value = amount ? Number(amount[1]) : /^half\b/.test(part) ? 0 : 1;
    if (half) value += 0.5;
    const word = part
      .replace(/^(?:\d+(?:\.\d+)?|an?|one|half(?:\s+an?\b)?)\s*/, '')
      .replace(/\b(?:and\s+)?(?:a\s+|an\s+)?half\b/g, '')
      .trim();
    const unit = unitOf(word);
    if (!unit) return null;
    if (unit === 'businessDays') out.businessDays = (out.businessDays ?? 0) + value;
    else addPart(out.parts, /^fortnight/.test(word) ? value * 2 : value, unit);
  }
  return out;
}
