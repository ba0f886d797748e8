import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { BatonError, type ErrorCode, ValidationError } from '../core/index.ts';
import { parseSchedule } from './index.ts';

const SH = 'Asia/Shanghai';
/** Thursday 2026-03-05 14:30 in Shanghai. */
const NOW = DateTime.fromISO('2026-03-05T14:30:00', { zone: SH }).toMillis();
const wall = (ms: number, zone = SH) => DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');

function failure(fn: () => unknown): BatonError {
  try {
    fn();
  } catch (err) {
    if (err instanceof BatonError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

function expectCode(fn: () => unknown, code: ErrorCode, field?: string): BatonError {
  const err = failure(fn);
  expect(err.code).toBe(code);
  if (field !== undefined) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe(field);
    expect(err.message.startsWith(`${field} must be`)).toBe(true);
  }
  return err;
}

describe('parseSchedule: the protocol examples', () => {
  const examples: ReadonlyArray<[string, string, 'iso' | 'relative' | 'absolute']> = [
    ['in 2 minutes', '2026-03-05 14:32:00', 'relative'],
    ['in 30 seconds', '2026-03-05 14:30:30', 'relative'],
    ['in 1 hour', '2026-03-05 15:30:00', 'relative'],
    ['tomorrow 9am', '2026-03-06 09:00:00', 'absolute'],
    ['next Monday 10:00', '2026-03-09 10:00:00', 'absolute'],
    ['2分钟后', '2026-03-05 14:32:00', 'relative'],
    ['30秒后', '2026-03-05 14:30:30', 'relative'],
    ['1小时后', '2026-03-05 15:30:00', 'relative'],
    ['明天早上9点', '2026-03-06 09:00:00', 'absolute'],
    ['下周一上午10点', '2026-03-09 10:00:00', 'absolute'],
    ['2025-10-30T15:00:00+08:00', '2025-10-30 15:00:00', 'iso'],
  ];
  for (const [text, expected, kind] of examples) {
    it(`reads "${text}" as ${expected}`, () => {
      const parsed = parseSchedule(text, { now: NOW, timezone: SH });
      expect(wall(parsed.at)).toBe(expected);
      expect(parsed.kind).toBe(kind);
      expect(parsed.text).toBe(text);
      expect(parsed.timezone).toBe(SH);
    });
  }

  it('reads the everyday expressions a colleague measured', () => {
    const cases: ReadonlyArray<[string, string]> = [
      ['半小时后', '2026-03-05 15:00:00'],
      ['后天下午3点', '2026-03-07 15:00:00'],
      ['今晚8点', '2026-03-05 20:00:00'],
      ['一刻钟后', '2026-03-05 14:45:00'],
      ['5分钟以后', '2026-03-05 14:35:00'],
      ['三分钟后', '2026-03-05 14:33:00'],
      ['in an hour and a half', '2026-03-05 16:00:00'],
      ['at noon', '2026-03-06 12:00:00'],
    ];
    for (const [text, expected] of cases)
      expect(wall(parseSchedule(text, { now: NOW, timezone: SH }).at), text).toBe(expected);
  });

  it('reports delay, ISO with the zone offset, and language', () => {
    const p = parseSchedule('in 2 minutes', { now: NOW, timezone: SH });
    expect(p.delayMs).toBe(120_000);
    expect(p.iso).toBe('2026-03-05T14:32:00.000+08:00');
    expect(p.language).toBe('en');
    expect(p.past).toBe(false);
    expect(parseSchedule('2分钟后', { now: NOW, timezone: SH }).language).toBe('zh');
  });

  it('renders an ISO instant given with another offset in the schedule zone', () => {
    const p = parseSchedule('2026-03-05T10:00:00Z', { now: NOW, timezone: SH });
    expect(p.iso).toBe('2026-03-05T18:00:00.000+08:00');
    expect(p.delayMs).toBe(3.5 * 3_600_000);
  });
});

describe('parseSchedule: past times and the horizon', () => {
  it('reads an offset into the past ("ago", "前") as past: delivered at once, never moved ahead', () => {
    for (const [text, expected] of [
      ['5 minutes ago', '2026-03-05 14:25:00'],
      ['3 days ago', '2026-03-02 14:30:00'],
      ['5分钟前', '2026-03-05 14:25:00'],
      ['last friday', '2026-02-27 14:30:00'],
    ]) {
      const p = parseSchedule(text as string, { now: NOW, timezone: SH });
      expect([wall(p.at), p.past, p.delayMs], text).toEqual([expected, true, 0]);
    }
  });

  it('refuses offsets too large for the calendar as beyond the horizon, never as an empty answer', () => {
    for (const text of [
      'in 999999 years',
      'in 9999999999 days',
      'in 100000000000000000000000 minutes',
      '999999年后',
    ]) {
      const err = expectCode(
        () => parseSchedule(text, { now: NOW, timezone: SH, horizonMs: 8.64e15 }),
        'SCHEDULE_BEYOND_HORIZON',
        'schedule',
      );
      expect(err.message, text).toContain('horizon');
    }
  });

  it('delivers at once (delay 0) for an absolute time already past, and says so', () => {
    const p = parseSchedule('2025-10-30T15:00:00+08:00', { now: NOW, timezone: SH });
    expect(p.past).toBe(true);
    expect(p.delayMs).toBe(0);
    const today = parseSchedule('today at 9am', { now: NOW, timezone: SH });
    expect([today.past, today.delayMs, wall(today.at)]).toEqual([true, 0, '2026-03-05 09:00:00']);
  });

  it('moves a bare time of day already past to its next occurrence', () => {
    expect(wall(parseSchedule('9am', { now: NOW, timezone: SH }).at)).toBe('2026-03-06 09:00:00');
    expect(wall(parseSchedule('下午2点', { now: NOW, timezone: SH }).at)).toBe('2026-03-06 14:00:00');
  });

  it('refuses a time beyond the horizon (one calendar year by default)', () => {
    expect(parseSchedule('in 1 year', { now: NOW, timezone: SH }).delayMs).toBeGreaterThan(0);
    const err = expectCode(
      () => parseSchedule('in 13 months', { now: NOW, timezone: SH }),
      'SCHEDULE_BEYOND_HORIZON',
      'schedule',
    );
    expect(err.message).toContain('2027-03-05T14:30:00.000+08:00');
    expectCode(
      () => parseSchedule('in 2 hours', { now: NOW, timezone: SH, horizonMs: 3_600_000 }),
      'SCHEDULE_BEYOND_HORIZON',
    );
  });
});

describe('parseSchedule: the object form, zones and languages', () => {
  it('reads { when, language, timezone } and refuses any other property, naming it', () => {
    expect(() =>
      parseSchedule(
        { when: 'tomorrow 9am', language: 'zh', timezone: 'America/New_York', note: 'extra' },
        { now: NOW, defaultTimezone: SH },
      ),
    ).toThrow(/^schedule\.note is not an option; the options are when, language, timezone$/);
    const p = parseSchedule(
      { when: 'tomorrow 9am', language: 'zh', timezone: 'America/New_York' },
      { now: NOW, defaultTimezone: SH },
    );
    expect(p.timezone).toBe('America/New_York');
    expect(wall(p.at, 'America/New_York')).toBe('2026-03-06 09:00:00');
    expect(p.iso).toBe('2026-03-06T09:00:00.000-05:00');
    expect(p.language).toBe('zh');
  });

  it('lets the call force the zone and language over the object form', () => {
    const p = parseSchedule(
      { when: '明天早上9点', language: 'zh', timezone: 'America/New_York' },
      { now: NOW, timezone: SH, language: 'en' },
    );
    expect([p.timezone, p.language, wall(p.at)]).toEqual([SH, 'en', '2026-03-06 09:00:00']);
  });

  it('reads the text with the grammar the call names (parse-time --lang), refusing what that grammar cannot read', () => {
    const zh = parseSchedule('明天早上9点', { now: NOW, timezone: SH, grammar: 'zh' });
    expect(wall(zh.at)).toBe('2026-03-06 09:00:00');
    const asEnglish = failure(() => parseSchedule('明天早上9点', { now: NOW, timezone: SH, grammar: 'en' }));
    expect(asEnglish.code).toBe('TIME_EXPRESSION_INVALID');
    expect(asEnglish.message).toContain('read as English, as asked');
    const asChinese = failure(() => parseSchedule('in 2 minutes', { now: NOW, timezone: SH, grammar: 'zh' }));
    expect(asChinese.code).toBe('TIME_EXPRESSION_INVALID');
    expect(asChinese.message).toContain('read as Chinese, as asked');
    // ISO 8601 reads the same in both.
    const iso = parseSchedule('2026-03-06T09:00:00+08:00', { now: NOW, grammar: 'zh' });
    expect(wall(iso.at)).toBe('2026-03-06 09:00:00');
  });

  it('uses defaultTimezone when neither the call nor the schedule names a zone', () => {
    const p = parseSchedule('tomorrow 9am', { now: NOW, defaultTimezone: 'Europe/London' });
    expect(p.iso).toBe('2026-03-06T09:00:00.000+00:00');
  });

  it('accepts regional language tags like zh-CN', () => {
    expect(
      parseSchedule({ when: 'in 5 minutes', language: 'zh-CN' }, { now: NOW, timezone: SH }).language,
    ).toBe('zh');
  });

  it('reads 9am as 09:00 local across a DST change in New York', () => {
    const ny = 'America/New_York';
    const before = DateTime.fromISO('2026-03-07T10:00:00', { zone: ny }).toMillis();
    const p = parseSchedule('tomorrow 9am', { now: before, timezone: ny });
    expect(p.iso).toBe('2026-03-08T09:00:00.000-04:00');
    expect(p.delayMs).toBe(22 * 3_600_000);
    // An offset in hours is elapsed time; one in days is calendar time.
    expect(parseSchedule('in 24 hours', { now: before, timezone: ny }).iso).toBe(
      '2026-03-08T11:00:00.000-04:00',
    );
    expect(parseSchedule('in 1 day', { now: before, timezone: ny }).iso).toBe(
      '2026-03-08T10:00:00.000-04:00',
    );
  });
});

describe('parseSchedule: bad input names the field', () => {
  it('refuses a wrong shape with SCHEDULE_INVALID', () => {
    expectCode(() => parseSchedule(42, { now: NOW }), 'SCHEDULE_INVALID', 'schedule');
    expectCode(() => parseSchedule(null, { now: NOW }), 'SCHEDULE_INVALID', 'schedule');
    expectCode(() => parseSchedule(['in 2 minutes'], { now: NOW }), 'SCHEDULE_INVALID', 'schedule');
    expectCode(() => parseSchedule({}, { now: NOW }), 'SCHEDULE_INVALID', 'schedule.when');
    expectCode(() => parseSchedule({ when: '  ' }, { now: NOW }), 'SCHEDULE_INVALID', 'schedule.when');
    expectCode(() => parseSchedule({ when: 5 }, { now: NOW }), 'SCHEDULE_INVALID', 'schedule.when');
    expectCode(
      () => parseSchedule({ when: 'now', language: 'fr' }, { now: NOW }),
      'SCHEDULE_INVALID',
      'schedule.language',
    );
    expectCode(
      () => parseSchedule({ when: 'now', timezone: 8 }, { now: NOW }),
      'SCHEDULE_INVALID',
      'schedule.timezone',
    );
  });

  it('refuses an unknown IANA zone with TIMEZONE_INVALID', () => {
    expectCode(
      () => parseSchedule({ when: 'now', timezone: 'Mars/Olympus' }, { now: NOW }),
      'TIMEZONE_INVALID',
      'schedule.timezone',
    );
    expectCode(
      () => parseSchedule('now', { now: NOW, timezone: 'Asia/Nowhere' }),
      'TIMEZONE_INVALID',
      'timezone',
    );
    expectCode(
      () => parseSchedule('now', { now: NOW, defaultTimezone: 'GMT+8' }),
      'TIMEZONE_INVALID',
      'defaultTimezone',
    );
  });

  it('refuses empty or unreadable text, listing the accepted forms in both languages', () => {
    const err = expectCode(
      () => parseSchedule('', { now: NOW, timezone: SH }),
      'TIME_EXPRESSION_INVALID',
      'schedule',
    );
    for (const example of [
      'in 2 minutes',
      'tomorrow 9am',
      '2分钟后',
      '明天早上9点',
      '下周一上午10点',
      '2025-10-30T15:00:00+08:00',
    ])
      expect(err.message).toContain(example);
    expectCode(
      () => parseSchedule('after lunch', { now: NOW, timezone: SH }),
      'TIME_EXPRESSION_INVALID',
      'schedule',
    );
    expectCode(
      () => parseSchedule({ when: '香蕉' }, { now: NOW, timezone: SH }),
      'TIME_EXPRESSION_INVALID',
      'schedule.when',
    );
    expectCode(
      () => parseSchedule('2026-02-30T10:00:00', { now: NOW, timezone: SH }),
      'TIME_EXPRESSION_INVALID',
    );
  });

  it('refuses a negative offset instead of reading it as the past', () => {
    for (const text of ['-5 minutes', 'in -2 minutes', '-5分钟后']) {
      const err = expectCode(
        () => parseSchedule(text, { now: NOW, timezone: SH }),
        'TIME_EXPRESSION_INVALID',
        'schedule',
      );
      expect(err.data.reason, text).toBe('negative offset');
      // One sentence: what is wrong, what to give instead, what was given.
      expect(err.message, text).toBe(
        `schedule must be a time ahead, not a negative offset — a positive one like "in 5 minutes" or "5分钟后", got "${text}"`,
      );
    }
  });

  it('checks its own options', () => {
    expectCode(() => parseSchedule('now', { now: Number.NaN }), 'INVALID_OPTION', 'now');
    expectCode(() => parseSchedule('now', { now: NOW, horizonMs: -1 }), 'INVALID_OPTION', 'horizonMs');
    expectCode(
      () => parseSchedule('now', { now: NOW, language: 'de' as 'en' }),
      'INVALID_OPTION',
      'language',
    );
  });
});
