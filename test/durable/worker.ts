/** A worker process for the durable-primitives crash test: executes the runs of test/durable/tasks.ts. */
import { appendFileSync } from 'node:fs';
import { createBaton } from '../../src/index.ts';
import { openSqliteStore } from '../../src/store/index.ts';
import { tasks } from './tasks.ts';

const [db, log] = process.argv.slice(2) as [string, string];
const store = openSqliteStore(db);
const baton = createBaton({ store, tasks, worker: { concurrency: 4, leaseMs: 2_000, pollMs: 50 } });
await baton.ready();
appendFileSync(log, `ready ${process.pid}\n`);
