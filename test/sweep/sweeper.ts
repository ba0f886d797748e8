// A process that sweeps a SQLite store (TTL sweeps on the sweeper thread) in short slices while it
// keeps writing runs that never expire, one per sweep: `sweeper.ts <file> <name>`. It prints
// `swept <n>` after each sweep that deleted something, and `done <swept> <wrote>` once nothing
// expired is left. The sweep tests SIGKILL it mid-backlog or run two of them on one file.
import { openSqliteStore } from '../../src/store/index.ts';

const [file, name] = process.argv.slice(2) as [string, string];
const store = openSqliteStore(file);
let swept = 0;
let wrote = 0;
for (;;) {
  // A write issued while the sweep runs: held, then committed after it.
  const write = store.createRuns(
    [{ id: `${name}-${wrote}`, kind: 'task', name: 'w', input: {}, status: 'queued' }],
    [],
  );
  const { runs } = await store.sweep({ sliceMs: 0.05 });
  await write;
  wrote++;
  if (runs === 0) break;
  swept += runs;
  process.stdout.write(`swept ${runs}\n`);
}
await store.close();
process.stdout.write(`done ${swept} ${wrote}\n`);
