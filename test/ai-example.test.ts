/**
 * examples/ai as written: SIGKILLed during its second tool call, started again it takes the run
 * back and pays only for the model call it had not made (the first two come from the record) and
 * the tool call that had not finished.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-ai-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const example = (...args: string[]) =>
  spawnSync(
    process.execPath,
    ['--import', TSX_LOADER, join(root, 'examples/ai/durable-agent.ts'), '--db', join(dir, 'ai.db'), ...args],
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: 90_000,
    },
  );

it('resumes the agent after SIGKILL without paying for a model call twice', () => {
  const crashed = example('--crash');
  expect(crashed.signal).toBe('SIGKILL');
  const again = example();
  expect(again.status, again.stderr).toBe(0);
  expect(again.stdout).toMatch(/taking back run run_\w+ after the crash/);
  expect(again.stdout).toMatch(/answer: Cell C is degrading/);
  expect(again.stdout).toMatch(/model calls in this process: 1, tool runs in this process: 1/);
  expect(again.stdout).toMatch(/memoized: 3 model call\(s\), 2 tool call\(s\)/);
});
