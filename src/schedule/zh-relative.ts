import { addPart, type DurationParts, type DurationUnit } from './duration-parts.ts';
import { parseZhNumber, ZH_NUMBER } from './zh-numbers.ts';

/**
 * Chinese offsets: 5分钟后, 再过十分钟, 2小时18分钟以后, 半小时后, 一个半小时后, 一刻钟后, 半钟头后,
 * 三天后, 两个星期后. A month needs 个 (3个月后), since 3月后 reads as "after March".
 */

const UNIT_WORDS: ReadonlyArray<[string, DurationUnit]> = [
  ['秒钟', 'seconds'],
  ['秒鐘', 'seconds'],
  ['秒', 'seconds'],
  ['分钟', 'minutes'],
  ['分鐘', 'minutes'],
  ['分', 'minutes'],
  ['小时', 'hours'],
  ['小時', 'hours'],
  ['钟头', 'hours'],
  ['鐘頭', 'hours'],
  ['钟', 'hours'],
  ['鐘', 'hours'],
  ['天', 'days'],
  ['周', 'weeks'],
  ['週', 'weeks'],
  ['星期', 'weeks'],
  ['礼拜', 'weeks'],
  ['禮拜', 'weeks'],
  ['月', 'months'],
  ['年', 'years'],
];
const UNIT_SOURCE = UNIT_WORDS.map(([w]) => w).join('|');
const UNIT_OF = new Map(UNIT_WORDS);

// 1个半小时 / 两个钟头 / 3天半 / 半个小时 / 一刻钟 / 3刻钟
const PART = new RegExp(
  `(${ZH_NUMBER})\\s*([个個])?\\s*(半)?\\s*(${UNIT_SOURCE})(半)?|半\\s*([个個])?\\s*(${UNIT_SOURCE})|(${ZH_NUMBER})\\s*刻钟?`,
  'y',
);
const JOINER = /\s*(?:零|又|和|加|,|、)?\s*/y;
const PREFIX = /(再过|再過|再等|过了|過了|过|過|等)\s*/y;
const SUFFIX = /\s*(以后|以後|之后|之後|过后|過後|後|后|以前|之前|前)/y;
const AGO = /前$/;
const NEGATIVE = /[-−负]\s*$/;

function unitFor(word: string | undefined, counter: string | undefined): DurationUnit | null {
  const unit = UNIT_OF.get(word ?? '');
  if (!unit) return null;
  // "3月" is March and "3钟" nothing; only "3个月" and "3个钟" are offsets.
  if ((word === '月' || word === '钟' || word === '鐘') && !counter) return null;
  return unit;
}

/** Reads consecutive duration parts starting exactly at `pos`. */
export function readZhDuration(text: string, pos: number): { parts: DurationParts; end: number } | null {
  const parts: DurationParts = {};
  let at = pos;
  let found = false;
  for (;;) {
    let start = at;
    if (found) {
      JOINER.lastIndex = at;
      const j = JOINER.exec(text);
      start = j ? JOINER.lastIndex : at;
    }
    PART.lastIndex = start;
    const m = PART.exec(text);
    if (!m) break;
    if (m[8] !== undefined) {
      const n = parseZhNumber(m[8]);
      if (n === null) break;
      addPart(parts, n * 15, 'minutes');
    } else if (m[7] !== undefined) {
      const unit = unitFor(m[7], m[6] ?? '个');
      // 半天 is "a long while" as often as "half a day": not read.
      if (!unit || unit === 'days') break;
      addPart(parts, 0.5, unit);
    } else {
      const n = parseZhNumber(m[1] as string);
      const unit = unitFor(m[4], m[2]);
      if (n === null || !unit) break;
      // 2026年 is a year, not 2026 years.
      if (unit === 'years' && !m[2] && /^\d{4}$/.test(m[1] as string)) break;
      addPart(parts, n + (m[3] || m[5] ? 0.5 : 0), unit);
    }
    found = true;
    at = PART.lastIndex;
  }
  return found ? { parts, end: at } : null;
}

export type ZhRelative = {
  parts: DurationParts;
  start: number;
  end: number;
  negative: boolean;
  /** 5分钟前, 3天之前: an offset into the past. */
  ago: boolean;
};

/** The first offset in the text: a duration followed by 后/以后/之后, or preceded by 再过/过. */
export function findZhRelative(text: string): ZhRelative | null {
  for (let i = 0; i < text.length; i++) {
    PREFIX.lastIndex = i;
    const prefix = PREFIX.exec(text);
    const from = prefix ? PREFIX.lastIndex : i;
    const duration = readZhDuration(text, from);
    if (!duration) continue;
    SUFFIX.lastIndex = duration.end;
    const suffix = SUFFIX.exec(text);
    if (!prefix && !suffix) continue;
    const ago = suffix !== null && AGO.test(suffix[1] as string);
    // "过5分钟前" says both: not an offset we read.
    if (prefix && ago) continue;
    return {
      parts: duration.parts,
      start: i,
      end: suffix ? SUFFIX.lastIndex : duration.end,
      negative: NEGATIVE.test(text.slice(0, from)),
      ago,
    };
  }
  return null;
}
