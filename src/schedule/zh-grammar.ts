import { isClockDuration, toLuxon } from './duration-parts.ts';
import { NEGATIVE_OFFSET, type Reading } from './reading.ts';
import type { Daypart, MomentSpec, TimeSpec } from './resolve-moment.ts';
import { end, num, type Part, sticky, YEAR_DIGITS, ZH_DAY_PARTS } from './zh-days.ts';
import { unreadTimeWords } from './zh-leftover.ts';
import { ZH_NUMBER } from './zh-numbers.ts';
import { findZhRelative, readZhDuration } from './zh-relative.ts';
import {
  DAY_WORDS,
  DAYPART_WORDS,
  MONTH_OFFSET,
  NOW_WORDS,
  WEEK_OFFSET,
  WEEKDAY_OF,
  YEAR_OFFSET,
} from './zh-words.ts';

/**
 * The Chinese grammar. It finds the first time expression in the text (a sentence such as
 * "下周一下午六点提醒我吃火锅" works too) as a chain of parts in their usual order: a day
 * (明天, 下周一, 8月15日, 8号), a day part (早上, 下午, 晚上) and a clock time (9点, 8点半, 20时1刻,
 * 18:00, 明天8.30), or an offset (5分钟后, 再过半小时).
 */

const N = ZH_NUMBER;
const DAY_MARK = '[日号號]';
const alternatives = (o: object) =>
  Object.keys(o)
    .sort((a, b) => b.length - a.length)
    .join('|');

function exec(re: RegExp, text: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(text);
}

const NOW = sticky(`(?:${NOW_WORDS.join('|')})(?:就)?`);
// Between parts: "明天的早上", "国庆节当天晚上", "中秋节那天晚上8点".
const SAME_DAY = sticky('当天|當天|那天|那一天');
const SEPARATOR = sticky('(?:[的\\s,、]|当天|當天|那天|那一天)*');
const HOUR_WORD = sticky(`(${N})\\s*(?:点|點|时|時)(?:钟|鐘)?`);
const SECONDS = sticky(`(${N})\\s*秒`);

/** What may follow "8点": 半, 1刻, 差5分, 整, 过6分 / 25分 / 30 (bare); seconds come after. */
const MINUTE_TAILS: ReadonlyArray<{ re: RegExp; minute(m: RegExpExecArray, hour: number): TimeSpec | null }> =
  [
    { re: sticky('半'), minute: (_, hour) => ({ hour, minute: 30, second: 0 }) },
    { re: sticky(`(${N})\\s*刻`), minute: (m, hour) => ({ hour, minute: 15 * num(m[1]), second: 0 }) },
    {
      re: sticky(`差\\s*(${N})\\s*分?`),
      minute: (m, hour) => ({ hour: hour - 1, minute: 60 - num(m[1]), second: 0 }),
    },
    { re: sticky('整'), minute: (_, hour) => ({ hour, minute: 0, second: 0 }) },
    {
      re: sticky(`过?\\s*(${N})\\s*(分钟|分鐘|分)?(?![天号號日月年个個周週刻钟鐘小时時点點])`),
      // A bare minute needs two characters ("8点30", "八点三十"): "3点一起" and "到1" are not minutes.
      minute: (m, hour) =>
        m[2] || (m[1] as string).length >= 2 ? { hour, minute: num(m[1]), second: 0 } : null,
    },
  ];

function clockTail(text: string, at: number, hour: number): { time: TimeSpec; end: number } {
  for (const tail of MINUTE_TAILS) {
    const m = exec(tail.re, text, at);
    const time = m && tail.minute(m, hour);
    if (!m || !time) continue;
    const s = exec(SECONDS, text, end(m));
    return s ? { time: { ...time, second: num(s[1]) }, end: end(s) } : { time, end: end(m) };
  }
  return { time: { hour, minute: 0, second: 0 }, end: at };
}

function setTime(spec: MomentSpec, time: TimeSpec, at: number): number {
  const ok =
    time.hour >= 0 &&
    time.hour <= 24 &&
    time.minute >= 0 &&
    time.minute < 60 &&
    (time.hour < 24 || (time.minute === 0 && time.second === 0));
  if (!ok || !(time.second >= 0 && time.second < 60)) return -1;
  spec.time = time;
  return at;
}

const started = (spec: MomentSpec) => spec.day !== undefined || spec.daypart !== undefined;

const PARTS: readonly Part[] = [
  {
    slot: 'day',
    re: sticky(
      `${YEAR_DIGITS}\\s*年\\s*(${N})\\s*月\\s*(${N})\\s*${DAY_MARK}?|(\\d{4})[-/.](\\d{1,2})[-/.](\\d{1,2})(?!\\d)`,
    ),
    read: (m, spec) => {
      const [year, month, day] = m[1] ? [m[1], m[2], m[3]] : [m[4], m[5], m[6]];
      // 27年3月2日: a two-digit year is this century's.
      const y = (year as string).length === 2 ? 2000 + num(year) : num(year);
      spec.day = { kind: 'date', year: y, month: num(month), day: num(day) };
      return end(m);
    },
  },
  {
    slot: 'day',
    re: sticky(`(今|明|后|後|去|前)年\\s*(${N})\\s*月\\s*(${N})\\s*${DAY_MARK}?`),
    read: (m, spec) => {
      const yearOffset = YEAR_OFFSET[m[1] as string] as number;
      spec.day = { kind: 'date', month: num(m[2]), day: num(m[3]), yearOffset };
      return end(m);
    },
  },
  ...ZH_DAY_PARTS,
  {
    slot: 'day',
    re: sticky(`(下下|下|上|本|这|這|同|当|當)(?:个|個)?月\\s*(${N})\\s*${DAY_MARK}`),
    read: (m, spec) => {
      spec.day = { kind: 'date', day: num(m[2]), monthOffset: MONTH_OFFSET[m[1] as string] as number };
      return end(m);
    },
  },
  {
    slot: 'day',
    re: sticky(`(${N})\\s*月\\s*(${N})\\s*(?:${DAY_MARK})?`),
    read: (m, spec) => {
      if (!(num(m[1]) <= 12 && num(m[2]) <= 31)) return -1;
      spec.day = { kind: 'date', month: num(m[1]), day: num(m[2]) };
      return end(m);
    },
  },
  {
    slot: 'day',
    re: sticky(`(${N})\\s*${DAY_MARK}`),
    read: (m, spec) => {
      if (!(num(m[1]) <= 31)) return -1;
      spec.day = { kind: 'date', day: num(m[1]) };
      return end(m);
    },
  },
  {
    slot: 'day',
    re: sticky('(下下|下|上|本|这|這)?\\s*(?:个|個)?\\s*(?:周|週|星期|礼拜|禮拜)([一二三四五六日天1-7])'),
    read: (m, spec) => {
      const weekday = WEEKDAY_OF[m[2] as string] as number;
      spec.day = { kind: 'weekday', weekday, ...(m[1] ? { week: WEEK_OFFSET[m[1]] as number } : {}) };
      return end(m);
    },
  },
  {
    slot: 'day',
    re: sticky(`(${alternatives(DAY_WORDS)})`),
    read: (m, spec) => {
      const [days, daypart] = DAY_WORDS[m[1] as string] as [number, Daypart?];
      spec.day = { kind: 'offset', days };
      if (daypart && !spec.daypart) spec.daypart = daypart;
      return end(m);
    },
  },
  {
    slot: 'daypart',
    re: sticky(`(${alternatives(DAYPART_WORDS)})`),
    read: (m, spec, text) => {
      const word = m[1] as string;
      // 早/晚/夜 alone are day parts only right before a clock time ("晚8点"), not in "早点".
      if (word.length === 1 && !exec(HOUR_WORD, text, end(m))) return -1;
      const daypart = DAYPART_WORDS[word] as Daypart;
      if (spec.daypart && spec.daypart !== daypart) return -1;
      spec.daypart = daypart;
      return end(m);
    },
  },
  {
    slot: 'time',
    // Digits with a colon are a 24-hour clock in Chinese text; "am"/"pm" may follow ("明天 9am").
    re: sticky('(\\d{1,2})(?::(\\d{2})(?::(\\d{2}))?)?\\s*([ap]\\.?m\\.?)?(?![a-z])'),
    read: (m, spec) => {
      if (m[2] === undefined && m[4] === undefined) return -1;
      const meridiem = m[4] ? (m[4][0] === 'a' ? 'am' : 'pm') : undefined;
      const time: TimeSpec = { hour: num(m[1]), minute: m[2] ? num(m[2]) : 0, second: m[3] ? num(m[3]) : 0 };
      return setTime(spec, meridiem ? { ...time, meridiem } : { ...time, clock24: true }, end(m));
    },
  },
  {
    slot: 'time',
    re: sticky(`差\\s*(${N})\\s*分?(?:钟)?\\s*(${N})\\s*(?:点|點)`),
    read: (m, spec) => setTime(spec, { hour: num(m[2]) - 1, minute: 60 - num(m[1]), second: 0 }, end(m)),
  },
  {
    slot: 'time',
    re: HOUR_WORD,
    read: (m, spec, text) => {
      const tail = clockTail(text, end(m), num(m[1]));
      return setTime(spec, tail.time, tail.end);
    },
  },
  {
    // 明天8.30, 15.30分: a dotted time only after a day or day part, or with 分.
    slot: 'time',
    re: sticky('(\\d{1,2})\\.(\\d{2})(?!\\d)(\\s*分)?'),
    read: (m, spec) =>
      started(spec) || m[3] ? setTime(spec, { hour: num(m[1]), minute: num(m[2]), second: 0 }, end(m)) : -1,
  },
  {
    // 明天早上0900
    slot: 'time',
    re: sticky('(\\d{2})(\\d{2})(?!\\d)'),
    read: (m, spec) =>
      started(spec) ? setTime(spec, { hour: num(m[1]), minute: num(m[2]), second: 0 }, end(m)) : -1,
  },
];

/** One part at `at`, merged into `spec`; where it ends, or -1 when none fits. */
function readPart(text: string, at: number, spec: MomentSpec): number {
  for (const part of PARTS) {
    if (spec[part.slot] !== undefined && part.slot !== 'daypart') continue;
    if (part.slot === 'daypart' && spec.time) continue;
    const m = exec(part.re, text, at);
    if (!m) continue;
    const next = part.read(m, spec, text);
    if (next >= 0) return next;
  }
  return -1;
}

/** The chain of parts starting at `start`, or null when none starts there. */
function readChain(text: string, start: number): { spec: MomentSpec; end: number } | null {
  const spec: MomentSpec = {};
  let last = -1;
  let at = start;
  for (;;) {
    const next = readPart(text, at, spec);
    if (next < 0) break;
    last = next;
    at = next + (exec(SEPARATOR, text, next)?.[0].length ?? 0);
  }
  if (last < 0) return null;
  // "国庆节当天", "中秋节那天": the same day, said again.
  const same = exec(SAME_DAY, text, last + (exec(/的?/y, text, last)?.[0].length ?? 0));
  return { spec, end: same ? end(same) : last };
}

type Found = { reading: Reading; start: number; end: number };

const hasMoment = (spec: MomentSpec) =>
  spec.day !== undefined || spec.time !== undefined || spec.daypart !== undefined;

/** The leftmost expression in the text, and where it is. */
function findExpression(text: string): Found | null {
  // A duration alone ("10分钟", "半小时") means that long from now, as "10 minutes" does.
  const alone = readZhDuration(text, 0);
  if (alone && /^[\s,.!。！]*$/.test(text.slice(alone.end)))
    return { reading: { kind: 'relative', duration: alone.parts }, start: 0, end: alone.end };
  const relative = findZhRelative(text);
  for (let i = 0; i < text.length; i++) {
    const now = exec(NOW, text, i);
    if (now) return { reading: { kind: 'relative', duration: {} }, start: i, end: end(now) };
    if (relative && relative.start === i) {
      if (relative.negative)
        return { reading: { kind: 'rejected', reason: NEGATIVE_OFFSET }, start: i, end: relative.end };
      const from = relative.end + (exec(SEPARATOR, text, relative.end)?.[0].length ?? 0);
      const then = relative.ago ? null : readChain(text, from);
      if (then && !then.spec.day && hasMoment(then.spec) && !isClockDuration(relative.parts))
        return {
          reading: {
            kind: 'absolute',
            spec: { ...then.spec, day: { kind: 'shift', duration: toLuxon(relative.parts) } },
          },
          start: i,
          end: then.end,
        };
      const reading: Reading = relative.ago
        ? { kind: 'relative', duration: relative.parts, ago: true }
        : { kind: 'relative', duration: relative.parts };
      return { reading, start: i, end: relative.end };
    }
    const chain = readChain(text, i);
    if (chain && hasMoment(chain.spec))
      return { reading: { kind: 'absolute', spec: chain.spec }, start: i, end: chain.end };
  }
  return null;
}

/**
 * Reads Chinese text (NFKC-normalized by the caller). The leftmost expression wins, so a whole
 * sentence works ("下周一下午六点提醒我吃火锅"); an offset measured in days or more may be followed
 * by a clock time ("3天后下午3点"). Time words left unread anywhere else in the text ("春节假期",
 * "明天下午3点到5点", "周五或周六") make it refused, never half-read.
 */
export function parseZh(text: string): Reading | null {
  const found = findExpression(text);
  if (!found || found.reading.kind === 'rejected') return found?.reading ?? null;
  const unread = unreadTimeWords(text.slice(0, found.start), text.slice(found.end));
  if (unread) return { kind: 'rejected', reason: `"${unread}" is not understood as part of the time` };
  return found.reading;
}
