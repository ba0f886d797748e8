// A BullMQ worker process for the killed-worker recovery figure (bench/_peer-recovery.ts).
// argv: <queue name> <lock ms> <stalled-check ms>. Prints `got <job id>` when a processor starts;
// the processor never ends. The parent adds the job and SIGKILLs the first process.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const [queue, lockMs, stalledMs] = process.argv.slice(2);
const connection = new Redis({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null });
new Worker(
  queue,
  (job) => {
    process.stdout.write(`got ${job.id}\n`);
    return new Promise(() => {});
  },
  { connection, concurrency: 1, lockDuration: Number(lockMs), stalledInterval: Number(stalledMs) },
);
