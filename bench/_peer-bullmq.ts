/**
 * BullMQ on the local Redis (127.0.0.1:6379), the same jobs as Baton's in bench/peers.ts: no-op
 * jobs through one Worker at concurrency 10, and delayed jobs all due at the same instant.
 * Redis here runs with its defaults (no fsync per write); Baton fsyncs every commit.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { type DueAtOnce, dueSamples } from './_peer-due.ts';

const CHUNK = 500;

function connect(): Redis {
  return new Redis({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null });
}

async function withQueue<T>(fn: (queue: Queue, name: string, connection: Redis) => Promise<T>): Promise<T> {
  const name = `baton-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const connection = connect();
  const queue = new Queue(name, { connection });
  try {
    return await fn(queue, name, connection);
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  }
}

/** `count` no-op jobs added in chunks of 500 while one Worker (concurrency 10) processes them. */
export function bullmqThroughput(count: number, concurrency: number): Promise<number> {
  return withQueue(async (queue, name, connection) => {
    let completed = 0;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const worker = new Worker(name, async () => 'ok', { connection, concurrency });
    worker.on('completed', () => {
      if (++completed === count) allDone();
    });
    try {
      await worker.waitUntilReady();
      const t0 = performance.now();
      const add = async () => {
        for (let i = 0; i < count; i += CHUNK) {
          const n = Math.min(CHUNK, count - i);
          await queue.addBulk(Array.from({ length: n }, (_, k) => ({ name: 'noop', data: { i: i + k } })));
        }
      };
      await Promise.all([add(), done]);
      return count / ((performance.now() - t0) / 1000);
    } finally {
      await worker.close();
    }
  });
}

/** `count` delayed jobs all due `leadMs` after the first add; lateness = processor start − due instant. */
export function bullmqDueAtOnce(count: number, leadMs: number, concurrency: number): Promise<DueAtOnce> {
  return withQueue(async (queue, name, connection) => {
    const due = Date.now() + leadMs;
    const late: number[] = [];
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const worker = new Worker(
      name,
      async () => {
        late.push(Date.now() - due);
        if (late.length === count) allDone();
      },
      { connection, concurrency },
    );
    try {
      await worker.waitUntilReady();
      for (let i = 0; i < count; i += CHUNK) {
        const n = Math.min(CHUNK, count - i);
        const delay = due - Date.now();
        await queue.addBulk(
          Array.from({ length: n }, (_, k) => ({ name: 'due', data: { i: i + k }, opts: { delay } })),
        );
      }
      const addedBy = due - Date.now();
      await done;
      return dueSamples(late, addedBy);
    } finally {
      await worker.close();
    }
  });
}
