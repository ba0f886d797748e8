import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { conformancePath } from '../../test/conformance-path.ts';
import { parseSchedule } from './index.ts';

/**
 * The public date-time corpora in test/conformance/datetime (see SOURCE.md there). Their
 * reference and expected values are floating wall-clock times, so both are read in one fixed zone.
 */

const DIR = conformancePath('datetime');
const ZONE = 'Asia/Shanghai';
// The corpora span years between reference and answer; the horizon is not what they test.
const HORIZON_MS = 100 * 366 * 86_400_000;

interface Case {
  lang: string;
  input: string;
  reference: string;
  expected: string;
  source: string;
}

function load(file: string): Case[] {
  return JSON.parse(readFileSync(resolve(DIR, file), 'utf8').replace(/^\uFEFF/, '')) as Case[];
}

/** Wall clock "2016-11-07T00:00:00", "...T14:11:10.9626841" or "...T08:00:00Z" read in ZONE. */
function wallClock(text: string): DateTime {
  const at = DateTime.fromISO(text.replace(/Z$/, ''), { zone: ZONE });
  if (!at.isValid) throw new Error(`bad reference ${text}`);
  return at;
}

function run(file: string, compare: 'instant' | 'date') {
  const cases = load(file);
  const failures: string[] = [];
  for (const c of cases) {
    const now = wallClock(c.reference);
    let got: string;
    try {
      const parsed = parseSchedule(c.input, { now: now.toMillis(), timezone: ZONE, horizonMs: HORIZON_MS });
      got = DateTime.fromMillis(parsed.at, { zone: ZONE }).toFormat('yyyy-MM-dd HH:mm:ss');
    } catch (err) {
      got = `error ${(err as Error).message.slice(0, 60)}`;
    }
    const expected = c.expected.replace('T', ' ').replace(/Z$/, '');
    const ok = compare === 'date' ? got.slice(0, 10) === expected : got === expected;
    if (!ok) failures.push(`  ${c.source}  ${JSON.stringify(c.input)}  expected ${expected}  got ${got}`);
  }
  const rate = (cases.length - failures.length) / cases.length;
  console.log(
    `${file}: ${cases.length - failures.length}/${cases.length} = ${(rate * 100).toFixed(1)} %` +
      (failures.length ? `\n${failures.join('\n')}` : ''),
  );
  return { rate, count: cases.length };
}

describe('conformance with the public date-time corpora', () => {
  it('reads schedule-cases.json (one future instant each) at 95 % or better', () => {
    const { rate, count } = run('schedule-cases.json', 'instant');
    expect(count).toBeGreaterThan(60);
    expect(rate).toBeGreaterThanOrEqual(0.95);
  });

  it('reads the Chinese sentences of fst-time-nlu at 85 % or better', () => {
    const { rate, count } = run('schedule-cases-zh-fst-time-nlu.json', 'instant');
    expect(count).toBeGreaterThan(60);
    expect(rate).toBeGreaterThanOrEqual(0.85);
  });

  it('picks the future reading of ambiguous expressions (reported, floor 90 %)', () => {
    const { rate } = run('schedule-cases-future-reading.json', 'instant');
    expect(rate).toBeGreaterThanOrEqual(0.9);
  });

  it('lands on the right calendar day for day-only expressions (reported, floor 90 %)', () => {
    const { rate } = run('schedule-date-cases.json', 'date');
    expect(rate).toBeGreaterThanOrEqual(0.9);
  });
});
