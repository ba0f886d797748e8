/**
 * `baton worker`: executes queued runs from the database until interrupted, with no HTTP and no run
 * of its own. Start as many as the machine (or, on a shared database, the fleet) should run; they
 * share the work through leases. SIGINT/SIGTERM stop it gracefully: running attempts are
 * interrupted and their runs handed back for another worker to continue from their checkpoints.
 */
import { BatonError } from '../core/index.ts';
import { createBaton } from '../runtime/index.ts';
import { loadModule } from './load-definitions.ts';
import { batonOptions, type CommonOptions, openStore } from './run-commands.ts';

export interface WorkerCommandOptions extends CommonOptions {
  tasks?: string;
  concurrency: string;
}

export async function workerCommand(options: WorkerCommandOptions): Promise<number> {
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10_000)
    throw new BatonError(
      'INVALID_INPUT',
      `--concurrency must be a whole number from 1 to 10000, got "${options.concurrency}"`,
      { data: { field: 'concurrency' } },
    );
  const module = options.tasks ? await loadModule(options.tasks) : undefined;
  const tasks = [...new Set([...options.config.taskDefs, ...(module?.tasks ?? [])])];
  if (tasks.length === 0)
    throw new BatonError(
      'INVALID_INPUT',
      options.tasks
        ? `--tasks: ${options.tasks} defines no tasks`
        : `--tasks must name the module that defines the tasks to execute (${options.config.file ? `${options.config.file} declares none` : 'no baton.config.ts here'})`,
      { data: { field: 'tasks' } },
    );
  const defs = { tasks };
  const store = await openStore(options.db, false);
  const baton = createBaton({ ...batonOptions(options, store, tasks), worker: { concurrency } });
  await baton.ready();
  const names = defs.tasks.map((t) => t.name).join(', ');
  const ready = { worker: 'ready', db: store.location, concurrency, tasks: defs.tasks.map((t) => t.name) };
  if (options.json) process.stdout.write(`${JSON.stringify(ready)}\n`);
  else process.stderr.write(`baton worker on ${store.location}: ${names} (concurrency ${concurrency})\n`);
  const signal = await new Promise<string>((resolve) => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve(sig));
  });
  if (!options.json) process.stderr.write(`baton worker: ${signal}, handing back running runs\n`);
  await baton.close();
  await store.close();
  return 0;
}
