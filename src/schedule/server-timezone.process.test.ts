import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allAnswers } from '../../test/schedule-corpus/answers.ts';

/**
 * Answers must not depend on the server's own zone: every expression of the conformance corpora
 * and of Baton's own corpus is read in child processes under three TZ settings, and the answers
 * (instant, past flag or error code) must be identical to each other and to this process's.
 */

const REPO = resolve(import.meta.dirname, '../..');
const SCRIPT = resolve(REPO, 'test/schedule-corpus/answers.ts');

function answersUnder(tz: string): string[] {
  const child = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: REPO,
    env: { ...process.env, TZ: tz },
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`child under TZ=${tz} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').pop() as string) as string[];
}

describe('independence from the server time zone', () => {
  it('gives identical answers on all corpora under TZ=UTC, Asia/Shanghai and America/Los_Angeles', () => {
    const here = allAnswers();
    expect(here.length).toBeGreaterThan(1_300);
    for (const tz of ['UTC', 'Asia/Shanghai', 'America/Los_Angeles']) {
      const there = answersUnder(tz);
      const differing = here.filter((a, i) => there[i] !== a).map((a, i) => `${a}  vs  ${there[i]}`);
      expect(differing, `answers that change under TZ=${tz}`).toEqual([]);
      expect(there).toEqual(here);
    }
  }, 360_000);
});
