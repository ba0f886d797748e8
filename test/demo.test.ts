/**
 * The demo a newcomer runs: killed with SIGKILL half-way, then started again, it finishes from its
 * checkpoints without redoing the memoized steps, and says so.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function demo(...args: string[]) {
  return spawnSync(
    process.execPath,
    ['--import', TSX_LOADER, join(root, 'examples/research/demo.ts'), '--db', join(dir, 'baton.db'), ...args],
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: 90_000,
    },
  );
}

it('survives a SIGKILL mid-run and finishes from its checkpoints on the next start', () => {
  const crashed = demo('--crash-after', '50%');
  expect(crashed.signal).toBe('SIGKILL');
  expect(crashed.stderr).toMatch(/simulating a crash: SIGKILL at 5\d% of the items read/);

  const again = demo();
  expect(again.status).toBe(0);
  expect(again.stderr).toMatch(/Found unfinished demo run run_\w+ .*Resuming it/);
  expect(again.stderr).toMatch(/resumed from checkpoint \d+/);
  expect(again.stderr).toMatch(/[1-9]\d* memoized step\(s\) were taken from the record and not run again/);
  expect(again.stdout).toMatch(/Report: 15 discussions, 12 papers, 8 repos read/);
  expect(again.stdout).toMatch(/strongest claims:/);

  const third = demo();
  expect(third.status).toBe(0);
  expect(third.stderr).toMatch(/Started demo run/);
}, 180_000);
