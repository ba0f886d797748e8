/**
 * A worker process for the chaos test: runs the chaos flow's steps from the shared SQLite file.
 * With `full`, its connection may not grow the file (`PRAGMA max_page_count` at the current page
 * count): every write that needs a new page fails with SQLITE_FULL, as on a full disk, while the
 * other workers keep writing.
 */
import { appendFileSync } from 'node:fs';
import { createBaton } from '../../src/index.ts';
import { openSqliteStore } from '../../src/store/index.ts';
import { chaosStep } from './flow.ts';

const [db, log, concurrency, mode] = process.argv.slice(2) as [string, string, string, string | undefined];
const store = openSqliteStore(db);
if (mode === 'full') {
  const pages = store.database.pragma('page_count', { simple: true }) as number;
  store.database.pragma(`max_page_count = ${pages}`);
}
const baton = createBaton({
  store,
  tasks: [chaosStep],
  worker: { concurrency: Number(concurrency), leaseMs: 2_000, pollMs: 50 },
});
await baton.ready();
appendFileSync(log, `ready ${process.pid}\n`);
process.on('SIGTERM', () => {
  void baton.close().then(() => process.exit(0));
});
