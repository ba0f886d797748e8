import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The checkpoint thread starts without the parent's preloads. A child process runs with a
 * `--require` preload that records every thread it is loaded in, opens a store, commits until the
 * thread has checkpointed, and closes; the checkpoint thread must not have loaded the preload.
 */

const REPO = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'baton-ckpt-argv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the checkpoint thread', () => {
  it("does not load the parent's --require/--import preloads", () => {
    const marks = join(dir, 'marks.txt');
    const preload = join(dir, 'preload.cjs');
    writeFileSync(
      preload,
      // Node's own loader thread (for --import hooks) loads it too; the checkpoint thread is the
      // one whose workerData names the database file.
      `const t = require('node:worker_threads');
require('node:fs').appendFileSync(${JSON.stringify(marks)}, t.isMainThread ? 'main\\n' : t.workerData?.file ? 'checkpoint\\n' : 'other\\n');\n`,
    );
    const script = join(dir, 'commit.mts');
    writeFileSync(
      script,
      `import { openSqliteStore } from ${JSON.stringify(resolve(REPO, 'src/store/sqlite/sqlite-store.ts'))};
const store = openSqliteStore(${JSON.stringify(join(dir, 'store.db'))}, { synchronous: 'NORMAL' });
let i = 0;
while (store.commitStats.checkpoints.offLoop === 0 && i < 20_000) {
  await store.createRuns([{ id: 'r' + i++, kind: 'task', name: 'w', input: {}, status: 'queued' }], []);
  if (i % 200 === 0) await new Promise((r) => setTimeout(r, 20));
}
console.log(JSON.stringify(store.commitStats.checkpoints));
await store.close();
`,
    );
    const child = spawnSync(process.execPath, ['--require', preload, '--import', 'tsx', script], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const stats = JSON.parse(child.stdout.trim().split('\n').pop() as string) as { offLoop: number };
    // The thread did run a checkpoint, so it was started; the preload ran in the main thread only.
    expect(stats.offLoop).toBeGreaterThan(0);
    const loaded = readFileSync(marks, 'utf8').trim().split('\n');
    expect(loaded).toContain('main');
    expect(loaded).not.toContain('checkpoint');
  }, 180_000);
});
