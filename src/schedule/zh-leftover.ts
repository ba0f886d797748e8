import { HOLIDAY_NAMES } from './zh-days.ts';
import { DAY_WORDS, DAYPART_WORDS } from './zh-words.ts';

/**
 * What must not be left unread around a Chinese time expression. A sentence may carry other words
 * ("提醒我开会", "买3本书"), and a bare length ("时长40分钟") is no time; but a second day, clock
 * time, offset, holiday, lunar or period word means the expression was only partly understood.
 */

const DIGIT = '[0-9零〇一二两兩三四五六七八九十百千万萬廿卅几幾]';
const multi = (o: object) =>
  Object.keys(o)
    .filter((k) => k.length > 1)
    .sort((a, b) => b.length - a.length)
    .join('|');

const UNREAD = new RegExp(
  [
    // a date or clock unit after a number: 5点, 3月, 12号, 2026年, 30秒, 1刻 (not 时间, 时长, 分钟)
    `${DIGIT}+\\s*多?\\s*(?:个|個)?\\s*(?:年|月|日|号|號|点|點|时(?![间間候长長])|時(?![間候長])|分(?![钟鐘])|秒|刻)`,
    // an offset: 3天后, 两个小时以前
    `${DIGIT}+\\s*多?\\s*(?:个|個)?\\s*(?:分钟|分鐘|小时|小時|钟头|鐘頭|天|周|週|星期|礼拜|禮拜)\\s*(?:以后|以後|之后|之後|过后|過後|后|後|以前|之前|前)`,
    // a weekday, a relative week or month, a day word, a day part
    '(?:周|週|星期|礼拜|禮拜)[一二三四五六日天1-7]',
    '(?:上|下|本|这|這)\\s*(?:个|個)?\\s*(?:周|週|星期|礼拜|禮拜|月)',
    multi(DAY_WORDS),
    multi(DAYPART_WORDS),
    HOLIDAY_NAMES,
    // calendars, periods and spans that change what the day means
    '农历|農曆|阴历|陰曆|旧历|舊曆|假期|长假|長假|期间|期間|之间|之間|以内|以內|月底|月初|年底|年初|周末|週末',
    '\\d{1,2}\\s*:\\s*\\d{2}',
  ].join('|'),
);

/**
 * Words that change what the expression next to them means (further away, "一会" is just a word
 * of the sentence): 前/之前/以前 make it a deadline ("周五前", "3点之前": no instant to deliver
 * at); 好 makes it a greeting ("早上好"); a moment named by what people do ("下班前", "午饭后",
 * "下午茶时间") or a vague one ("晚些时候", "待会儿") is no clock time we could know.
 */
const VAGUE = '下班|上班|放学|午饭|午餐|晚饭|晚餐|早饭|早餐|茶|晚些|早些|稍后|稍晚|晚点|早点|待会|一会|过会';
const AFTER = new RegExp(`^\\s*(?:之前|以前|前|好(?!好)|${VAGUE})`);
const BEFORE = new RegExp(`(?:${VAGUE})\\s*$`);

const TOUCHING_BEFORE = new RegExp(`${DIGIT}+$`);

/** The first time word found in the text outside the expression, or null. */
export function unreadTimeWords(before: string, after: string): string | null {
  // A number right before the expression belongs to it: 一两个小时后, 24点30分, 13月1日, 32号.
  // (After it, "3点一起吃饭" is a word; a unit after a number is caught below.)
  const touching = TOUCHING_BEFORE.exec(before);
  if (touching) return touching[0];
  const next = AFTER.exec(after) ?? BEFORE.exec(before);
  if (next) return next[0].trim();
  for (const part of [before, after]) {
    const m = UNREAD.exec(part);
    if (m) return m[0];
  }
  return null;
}
