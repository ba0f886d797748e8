/**
 * Issue 12 items 1-2 as a user meets them: `baton resume` of a run that ended once and then asks a
 * question exits 4 instead of hanging, the advice after a question matches what each answer does,
 * and resuming a run a person's answer ended says so instead of running it again.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBaton } from '../src/runtime/index.ts';
import { openSqliteStore } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-resume-'));
const db = join(dir, 'baton.db');
const tasks = join(import.meta.dirname, 'fixtures', 'tasks.ts');

function baton(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...args], {
    cwd: dir,
    env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function attempts(id: string): Promise<number> {
  const store = openSqliteStore(db);
  try {
    return (await store.readEvents({ runId: id })).filter((e) => e.type === 'attempt:started').length;
  } finally {
    await store.close();
  }
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('baton resume after a resume', () => {
  let id = '';
  it('asks, and advises per answer: no resume after answers that end the run', () => {
    const r = baton('--db', db, 'run', tasks, '--flow', 'stubborn');
    expect(r.code).toBe(4);
    id = /run (run_\w+) is waiting for a decision/.exec(r.out)?.[1] ?? '';
    expect(id).not.toBe('');
    // Every answer this question offers ends the run: following the advice must not run it again.
    expect(r.out).toContain(
      `after continue_partial, skip, manual_input or abandon: the run is over, nothing to resume (see it with baton show ${id})`,
    );
    expect(r.out).not.toContain('baton resume');
  });

  it('follows a run that was cancelled, resumed and asks again to its question (exit 4, no hang)', async () => {
    const store = openSqliteStore(db);
    const b = createBaton({ store, worker: false });
    await b.cancel(id);
    await b.close();
    await store.close();
    const r = baton('--db', db, 'resume', id);
    expect(r.code).toBe(4); // before: waited forever (the events ended at the old run:cancelled)
    expect(r.err).toContain('continues from its last checkpoint');
    expect(r.out).toContain(`baton decide ${id} <`);
    expect(await attempts(id)).toBe(2);
  });

  it('says so when an answer ended the run, and runs nothing again', async () => {
    const d = baton('--db', db, 'decide', id, 'abandon');
    expect(d.code).toBe(0);
    expect(d.out).toContain(
      `→ now failed: the run is over, nothing to resume (see it with \`baton show ${id}\`)`,
    );
    const r = baton('--db', db, 'resume', id);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the run was ended by cli's answer "abandon"`);
    expect(r.err).toContain(`baton resume ${id} --again`);
    expect(r.out).toContain(`run ${id} failed`);
    expect(await attempts(id)).toBe(2);
    const json = baton('--db', db, 'resume', id, '--json');
    expect(JSON.parse(json.out)).toMatchObject({ id, status: 'failed' });
  });

  it('runs it again with --again', async () => {
    const r = baton('--db', db, 'resume', id, '--again');
    expect(r.code).toBe(4);
    expect(await attempts(id)).toBe(3);
  });
});
