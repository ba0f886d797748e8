import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { parseSchedule } from './index.ts';

const SH = 'Asia/Shanghai';
/** Thursday 2026-03-05 14:30 in Shanghai. */
const THURSDAY = '2026-03-05T14:30:00';

function at(text: string, reference = THURSDAY, zone = SH): string {
  const now = DateTime.fromISO(reference, { zone }).toMillis();
  const parsed = parseSchedule(text, { now, timezone: zone, horizonMs: 3 * 366 * 86_400_000 });
  return DateTime.fromMillis(parsed.at, { zone }).toFormat('ccc yyyy-MM-dd HH:mm:ss');
}

function expectAll(cases: ReadonlyArray<[string, string]>, reference = THURSDAY) {
  for (const [text, expected] of cases) expect(at(text, reference), text).toBe(expected);
}

function refused(text: string): boolean {
  try {
    at(text);
    return false;
  } catch (err) {
    return isBatonError(err, 'TIME_EXPRESSION_INVALID');
  }
}

describe('Chinese offsets', () => {
  it('reads Chinese numerals, halves, quarters and compound offsets', () => {
    expectAll([
      ['十五分钟后', 'Thu 2026-03-05 14:45:00'],
      ['两个小时后', 'Thu 2026-03-05 16:30:00'],
      ['一个半小时后', 'Thu 2026-03-05 16:00:00'],
      ['1.5小时后', 'Thu 2026-03-05 16:00:00'],
      ['三刻钟后', 'Thu 2026-03-05 15:15:00'],
      ['2小时18分钟以后', 'Thu 2026-03-05 16:48:00'],
      ['再过十分钟', 'Thu 2026-03-05 14:40:00'],
      ['一周后', 'Thu 2026-03-12 14:30:00'],
      ['3个月后', 'Fri 2026-06-05 14:30:00'],
      ['马上', 'Thu 2026-03-05 14:30:00'],
      ['10分钟', 'Thu 2026-03-05 14:40:00'],
    ]);
  });

  it('puts a clock time on a day reached by an offset in days', () => {
    expectAll([['3天后下午3点', 'Sun 2026-03-08 15:00:00']]);
  });
});

describe('Chinese clock times and days', () => {
  it('reads the ways a clock time is said', () => {
    expectAll([
      ['八点三十', 'Thu 2026-03-05 20:30:00'],
      ['十点过六分', 'Thu 2026-03-05 22:06:00'],
      ['差五分十点', 'Thu 2026-03-05 21:55:00'],
      ['3点差5分', 'Thu 2026-03-05 14:55:00'],
      ['明天20时1刻', 'Fri 2026-03-06 20:15:00'],
      ['明天下午6:42:02', 'Fri 2026-03-06 18:42:02'],
      ['中午一点', 'Fri 2026-03-06 13:00:00'],
      ['晚上12点', 'Fri 2026-03-06 00:00:00'],
      ['明晚2点', 'Sat 2026-03-07 02:00:00'],
      ['明天 9:30 pm', 'Fri 2026-03-06 21:30:00'],
      ['明天早上0900', 'Fri 2026-03-06 09:00:00'],
    ]);
  });

  it('reads relative days, weeks, months and years', () => {
    expectAll([
      ['下下周一', 'Mon 2026-03-16 14:30:00'],
      ['这周五下午', 'Fri 2026-03-06 15:00:00'],
      ['周二上午9点', 'Tue 2026-03-10 09:00:00'],
      ['大后天晚上', 'Sun 2026-03-08 19:00:00'],
      ['下个月1号上午10点', 'Wed 2026-04-01 10:00:00'],
      ['明年3月1日', 'Mon 2027-03-01 14:30:00'],
      ['8月十五晚上8点', 'Sat 2026-08-15 20:00:00'],
      ['2026年12月31日 23:59', 'Thu 2026-12-31 23:59:00'],
    ]);
  });

  it('finds the expression inside a sentence and ignores unrelated numbers', () => {
    expectAll([
      ['下周一下午六点提醒我吃火锅', 'Mon 2026-03-09 18:00:00'],
      ['时间：下午3点（时长40分钟）', 'Thu 2026-03-05 15:00:00'],
      ['3点一起吃饭', 'Thu 2026-03-05 15:00:00'],
    ]);
  });
});

describe('English', () => {
  it('tells "friday", "this friday", "next friday" and "coming thursday" apart', () => {
    expectAll([
      ['friday', 'Fri 2026-03-06 14:30:00'],
      ['this friday at 5pm', 'Fri 2026-03-06 17:00:00'],
      ['next friday at 5pm', 'Fri 2026-03-13 17:00:00'],
      ['coming thursday', 'Thu 2026-03-12 14:30:00'],
      ['thursday at 6pm', 'Thu 2026-03-05 18:00:00'],
      ['thursday at 9am', 'Thu 2026-03-12 09:00:00'],
      ['tuesday next week', 'Tue 2026-03-10 14:30:00'],
    ]);
  });

  it('reads clock times in words and in short forms', () => {
    expectAll([
      ['a quarter to seven tomorrow', 'Fri 2026-03-06 06:45:00'],
      ['half past five tomorrow evening', 'Fri 2026-03-06 17:30:00'],
      ['five-thirty tomorrow evening', 'Fri 2026-03-06 17:30:00'],
      ['tomorrow at 8:45a', 'Fri 2026-03-06 08:45:00'],
      ['at 8.30pm today', 'Thu 2026-03-05 20:30:00'],
      ['tonight at 12', 'Fri 2026-03-06 00:00:00'],
      ['tonight at 1am', 'Fri 2026-03-06 01:00:00'],
      ['tomorrow at noon', 'Fri 2026-03-06 12:00:00'],
    ]);
  });

  it('reads a bare hour as its next occurrence today, and as written on another day', () => {
    expectAll([
      ['at 7', 'Thu 2026-03-05 19:00:00'],
      ['at 3', 'Thu 2026-03-05 15:00:00'],
      ['tomorrow at 7', 'Fri 2026-03-06 07:00:00'],
      ['09:00', 'Fri 2026-03-06 09:00:00'],
    ]);
  });

  it('reads offsets in several units and compact forms', () => {
    expectAll([
      ['in 2h30m', 'Thu 2026-03-05 17:00:00'],
      ['90s', 'Thu 2026-03-05 14:31:30'],
      ['1 day 2 hours later', 'Fri 2026-03-06 16:30:00'],
      ['in a couple of hours', 'Thu 2026-03-05 16:30:00'],
      ['half an hour from now', 'Thu 2026-03-05 15:00:00'],
      ['in 3 days at 5pm', 'Sun 2026-03-08 17:00:00'],
      ['in four business days', 'Wed 2026-03-11 14:30:00'],
    ]);
  });

  it('reads ends of periods, anchored offsets and holidays', () => {
    expectAll([
      ['end of day', 'Thu 2026-03-05 23:59:59'],
      ['end of the week', 'Sun 2026-03-08 23:59:59'],
      ['end of next month', 'Thu 2026-04-30 23:59:59'],
      ['3 days after christmas', 'Mon 2026-12-28 14:30:00'],
      ['2 weeks from tomorrow at 9am', 'Fri 2026-03-20 09:00:00'],
      ['the first friday of next month', 'Fri 2026-04-03 14:30:00'],
      ['easter 2027', 'Sun 2027-03-28 14:30:00'],
    ]);
  });

  it('rolls a day of the month to the next month that has it', () => {
    expectAll([['the 31st at 9am', 'Sun 2026-05-31 09:00:00']], '2026-03-31T10:00:00');
    expectAll([['October 14 8:00am', 'Thu 2027-10-14 08:00:00']], '2026-10-14T10:00:00');
  });

  it('refuses what it only half understands or what contradicts itself', () => {
    for (const text of [
      'after lunch',
      'in 2 hours at 5pm',
      '2 weeks before lunch',
      'tomorrow yesterday',
      '5',
      '2 2',
      'friday, 9 30',
      '5 at 9',
      '14PM',
      '24:30',
      'at a few',
      '3pm-5pm',
      'tomorrow morning at 8pm',
      'friday march 5 2026',
      '9am CST',
    ])
      expect(refused(text), text).toBe(true);
  });

  it('refuses Chinese with time words it did not read, instead of answering part of it', () => {
    for (const text of [
      '明天下午3点到5点',
      '周五或周六',
      '春节假期',
      '一两个小时后',
      '下午三四点',
      '十二三点',
      '3月7日星期五',
      '24点30分',
      '13月1日',
      '农历十三月初一',
    ])
      expect(refused(text), text).toBe(true);
  });
});
