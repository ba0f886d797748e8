/**
 * A Baton worker process for bench/pg-workers.ts: executes `bench.noop` runs from a Postgres store
 * (argv: the URL with ?schema=, the concurrency) and prints `ready` once its worker has started.
 */
import { createBaton, defineTask } from '../../src/index.ts';

const [url, concurrency] = process.argv.slice(2) as [string, string];
const noop = defineTask({ name: 'bench.noop', retry: false, run: () => 'ok' });
const baton = createBaton({ store: url, tasks: [noop], worker: { concurrency: Number(concurrency) } });
await baton.ready();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void baton.close().then(() => process.exit(0));
});
