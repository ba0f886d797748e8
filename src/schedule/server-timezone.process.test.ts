import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSchedule } from './index.ts';

/**
 * The result must not depend on the server's own zone. chrono-node (our fallback) reads fields
 * through the process's Date, so children run the same expressions under other TZ settings.
 */

const REPO = resolve(import.meta.dirname, '../..');
const INDEX = resolve(import.meta.dirname, 'index.ts');

const PROBES: ReadonlyArray<{ text: string; zone: string; now: number }> = [
  // Thursday 2026-03-05 14:30 in Shanghai
  ...[
    'tomorrow 9am',
    '明天早上9点',
    'next Monday 10:00',
    '下周一上午10点',
    'at 7',
    '12/25',
    'next friday',
  ].map((text) => ({ text, zone: 'Asia/Shanghai', now: Date.UTC(2026, 2, 5, 6, 30) })),
  // Saturday 2026-03-07 10:00 in New York, the day before clocks go forward
  ...['tomorrow 9am', 'tomorrow 2:30am', 'in 1 day', 'in 24 hours', 'Sunday noon', 'March 8 8am'].map(
    (text) => ({ text, zone: 'America/New_York', now: Date.UTC(2026, 2, 7, 15, 0) }),
  ),
];

function readAll(): string[] {
  return PROBES.map((p) => parseSchedule(p.text, { now: p.now, timezone: p.zone }).iso);
}

const CHILD = `
const { parseSchedule } = await import(process.argv[1]);
const probes = JSON.parse(process.argv[2]);
console.log(JSON.stringify(probes.map((p) => parseSchedule(p.text, { now: p.now, timezone: p.zone }).iso)));
`;

function readAllUnder(tz: string): string[] {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', CHILD, INDEX, JSON.stringify(PROBES)],
    { cwd: REPO, env: { ...process.env, TZ: tz }, encoding: 'utf8', timeout: 60_000 },
  );
  if (child.status !== 0) throw new Error(`child under TZ=${tz} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').pop() as string) as string[];
}

describe('independence from the server time zone', () => {
  it('reads the same instants under TZ=UTC, America/Los_Angeles and Pacific/Chatham', () => {
    const here = readAll();
    expect(here[0]).toBe('2026-03-06T09:00:00.000+08:00');
    expect(here[7]).toBe('2026-03-08T09:00:00.000-04:00');
    for (const tz of ['UTC', 'America/Los_Angeles', 'Pacific/Chatham'])
      expect(readAllUnder(tz), tz).toEqual(here);
  });
});
