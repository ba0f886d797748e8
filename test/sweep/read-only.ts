// Sweeps a store whose files were made read-only (chmod 444) after it opened, then writable again:
// prints one JSON line with what each sweep and a write answered. Run as a user that file modes
// bind (not root): sweep-processes.test.ts starts it as `nobody` when the test runs as root.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBatonError } from '../../src/core/index.ts';
import { openSqliteStore } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-sweep-ro-'));
const file = join(dir, 'ro.db');
const store = openSqliteStore(file);
await store.createRuns(
  Array.from({ length: 20 }, (_, i) => ({
    id: `r${i}`,
    kind: 'task' as const,
    name: 't',
    input: {},
    status: 'queued' as const,
  })),
  [],
);
store.database.prepare("UPDATE runs SET status = 'succeeded', expires_at = ?").run(Date.now() - 60_000);
const answer = (p: Promise<unknown>) =>
  p.then(
    (v) => v,
    (e: unknown) => (isBatonError(e) ? e.code : `not a BatonError: ${String(e)}`),
  );
const mode = (m: number) => {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) chmodSync(f, m);
};
mode(0o444);
const whileReadOnly = await answer(store.sweep({ sliceMs: 1_000 }));
mode(0o644);
const afterwards = await answer(store.sweep({ sliceMs: 1_000 }));
const write = await answer(
  store.createRuns([{ id: 'after', kind: 'task', name: 't', input: {}, status: 'queued' }], []),
);
await store.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ whileReadOnly, afterwards, write })}\n`);
