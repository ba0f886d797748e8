/**
 * `baton worker`: executes queued runs from the database until interrupted, with no HTTP and no run
 * of its own. Start as many as the machine (or, on a shared database, the fleet) should run; they
 * share the work through leases. SIGINT/SIGTERM stop it gracefully: running attempts are
 * interrupted and their runs handed back for another worker to continue from their checkpoints.
 */
import { BatonError } from '../core/index.ts';
import { createBaton, type TaskDefinition } from '../runtime/index.ts';
import { findConfig, loadModule } from './load-definitions.ts';
import { type CommonOptions, openStore } from './run-commands.ts';

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
  const module = options.tasks ?? findConfig();
  if (!module)
    throw new BatonError(
      'INVALID_INPUT',
      '--tasks must name the module that defines the tasks to execute (no baton.config.ts here)',
      { data: { field: 'tasks' } },
    );
  const defs = await loadModule(module);
  if (defs.tasks.length === 0)
    throw new BatonError('INVALID_INPUT', `--tasks: ${module} defines no tasks`, {
      data: { field: 'tasks' },
    });
  const store = await openStore(options.db, false);
  const baton = createBaton({ store, tasks: defs.tasks as TaskDefinition[], worker: { concurrency } });
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
