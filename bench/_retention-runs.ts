/** The runs both retention benches create: queued tasks with six 300-byte log events each. */
import type { NewEvent } from '../src/core/index.ts';
import type { NewRun } from '../src/store/index.ts';

export interface RetentionBatch {
  ids: string[];
  runs: NewRun[];
  events: NewEvent[];
}

/** `n` runs named `${prefix}${from}`…, with their events, ready for `store.createRuns`. */
export function retentionBatch(prefix: string, from: number, n: number): RetentionBatch {
  const ids = Array.from({ length: n }, (_, j) => `${prefix}${from + j}`);
  const events: NewEvent[] = ids.flatMap((runId) =>
    Array.from({ length: 6 }, (_, k) => ({
      runId,
      type: 'log:message' as const,
      data: { level: 'info' as const, message: `event ${k} `.padEnd(300, '.') },
    })),
  );
  const runs = ids.map((id) => ({
    id,
    kind: 'task' as const,
    name: 'work',
    input: { id },
    status: 'queued' as const,
  }));
  return { ids, runs, events };
}
