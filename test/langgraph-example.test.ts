/**
 * examples/langgraph as a user runs it: SIGKILLed mid-graph, started again it resumes the thread
 * from its last committed checkpoint (no source read twice), pauses at the interrupt, finishes when
 * approved; `baton ls` / `show` / `gc` see the thread through the same database.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { sqliteDriver } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const { Database } = sqliteDriver();

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-lg-example-'));
const db = join(dir, 'langgraph.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function node(script: string, ...args: string[]) {
  return spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, script), ...args], {
    cwd: dir,
    env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 90_000,
  });
}
const example = (...args: string[]) => node('examples/langgraph/research-graph.ts', '--db', db, ...args);
const baton = (...args: string[]) => node('src/cli/main.ts', '--db', db, ...args);

it('resumes after SIGKILL from the last checkpoint, then finishes after approval', () => {
  const crashed = example('--crash-after', '3');
  expect(crashed.signal).toBe('SIGKILL');
  expect(crashed.stdout.match(/^read /gm)).toHaveLength(3);

  const resumed = example();
  expect(resumed.status, resumed.stderr).toBe(0);
  expect(resumed.stderr).toMatch(/stopped after 3 of 5 sources; resuming it/);
  // Only the two sources not yet checkpointed are read again.
  expect(resumed.stdout.match(/^read (\S+):/gm)).toEqual(['read forum-1:', 'read forum-2:']);
  expect(resumed.stdout).toMatch(/waiting for approval: Publish a report of 5 findings\?/);

  const approved = example('--approve', 'yes');
  expect(approved.status, approved.stderr).toBe(0);
  expect(approved.stdout).toMatch(/Report on durable agents:\n- paper-1: .*\n- paper-2/);
  expect(approved.stdout).not.toMatch(/^read /m);
});

it('shows the thread in baton ls and show, and gc deletes it once its TTL has passed', () => {
  const ls = baton('ls');
  expect(ls.status, ls.stderr).toBe(0);
  expect(ls.stdout).toMatch(/langgraph threads\nTHREAD +CHECKPOINTS[^\n]*\nresearch-1 +9 /);
  const listed = JSON.parse(baton('ls', '--threads', '--json').stdout) as Array<Record<string, unknown>>;
  expect(listed).toEqual([expect.objectContaining({ threadId: 'research-1', checkpoints: 9, lastStep: 7 })]);

  const show = baton('show', 'research-1');
  expect(show.status, show.stderr).toBe(0);
  expect(show.stdout).toMatch(/langgraph thread research-1/);
  expect(show.stdout).toMatch(/\(root\) +-1 +input/);
  expect(show.stdout).toMatch(/__interrupt__/);
  const shown = JSON.parse(baton('show', 'research-1', '--json').stdout) as { checkpoints: unknown[] };
  expect(shown.checkpoints).toHaveLength(9);

  expect(JSON.parse(baton('gc', '--json').stdout)).toEqual({ deleted: 0, threads: 0 });
  // Age the thread past its 7-day TTL (the CLI runs on the system clock).
  const d = new Database(db);
  d.prepare('UPDATE langgraph_threads SET expires_at = ?').run(Date.now() - 1);
  d.close();
  expect(JSON.parse(baton('gc', '--json').stdout)).toEqual({ deleted: 0, threads: 1 });
  expect(baton('ls').stdout).toBe('no runs\n');
  const gone = baton('show', 'research-1');
  expect(gone.status).toBe(2);
  expect(gone.stderr).toMatch(/no run with id research-1/);
});
