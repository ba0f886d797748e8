/**
 * `baton parse-time` as a user types it, in real processes under different server zones: the same
 * answer everywhere, exit 0 when understood, exit 2 with the reason when refused or past the horizon.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');

function parseTime(tz: string, ...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), '--json', 'parse-time', ...args],
    {
      cwd: root,
      env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1', TZ: tz },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { code: r.status, out: r.stdout.trim(), err: r.stderr };
}

describe('baton parse-time', () => {
  it('refuses an offset past the horizon with the reason and exit code 2, never {"at": null}', () => {
    for (const text of ['in 999999 years', 'in 9999999999 days', 'in 2 years', '999999年后']) {
      const r = parseTime('UTC', text, '--tz', 'Asia/Shanghai', '--now', '2026-03-05T14:30:00');
      expect(r.code, text).toBe(2);
      const body = JSON.parse(r.out) as { ok: boolean; error: { code: string; message: string } };
      expect(body.ok).toBe(false);
      expect(body.error.code, text).toBe('SCHEDULE_BEYOND_HORIZON');
      expect(body.error.message, text).toContain('scheduling horizon');
      expect(r.out).not.toContain('"at":null');
    }
  });

  it('refuses what it does not fully understand with exit code 2 and names the part', () => {
    const r = parseTime('UTC', '春节假期', '--tz', 'Asia/Shanghai', '--now', '2026-03-05T14:30:00');
    expect(r.code).toBe(2);
    const body = JSON.parse(r.out) as { error: { code: string; data: { reason: string } } };
    expect(body.error.code).toBe('TIME_EXPRESSION_INVALID');
    expect(body.error.data.reason).toContain('假期');
  });

  it('reads --now without an offset in --tz, so the answer is the same under any server TZ', () => {
    const answers = ['UTC', 'Asia/Shanghai', 'America/Los_Angeles'].map((tz) => {
      const r = parseTime(tz, '中秋节晚上8点', '--tz', 'Asia/Shanghai', '--now', '2026-03-05T14:30:00');
      expect(r.code, tz).toBe(0);
      return JSON.parse(r.out) as { at: string; past: boolean };
    });
    expect(answers[0]).toEqual({ ...answers[0], at: '2026-09-25T20:00:00.000+08:00', past: false });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('reports a past expression as past, delivered at once', () => {
    const r = parseTime('UTC', 'last friday', '--tz', 'America/New_York', '--now', '2026-03-05T14:30:00');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ at: '2026-02-27T14:30:00.000-05:00', delayMs: 0, past: true });
  });

  it('reads the expression in the --lang it is given, refusing what that language cannot read', () => {
    const zh = parseTime(
      'UTC',
      '明天早上9点',
      '--lang',
      'zh',
      '--tz',
      'Asia/Shanghai',
      '--now',
      '2026-03-05T14:30:00',
    );
    expect(zh.code).toBe(0);
    expect(JSON.parse(zh.out)).toMatchObject({ at: '2026-03-06T09:00:00.000+08:00', language: 'zh' });
    const en = parseTime(
      'UTC',
      '明天早上9点',
      '--lang',
      'en',
      '--tz',
      'Asia/Shanghai',
      '--now',
      '2026-03-05T14:30:00',
    );
    expect(en.code).toBe(2);
    const body = JSON.parse(en.out) as { error: { code: string; data: { reason: string } } };
    expect(body.error.code).toBe('TIME_EXPRESSION_INVALID');
    expect(body.error.data.reason).toMatch(/^read as English, as asked/);
  });
});
