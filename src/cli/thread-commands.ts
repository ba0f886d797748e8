/**
 * LangGraph threads (`baton/langgraph`) in `baton ls` and `baton show`: read from the store's
 * tables, without LangGraph (the CLI never loads the integration or its peers).
 */
import {
  type GraphCheckpointStore,
  type GraphThreadRecord,
  isPostgresStore,
  SqliteStore,
  type Store,
} from '../store/index.ts';
import { formatDuration } from '../time/index.ts';
import { table } from './output.ts';

/** The LangGraph tables of a store; undefined for a store without them. */
export function graphsOf(store: Store): GraphCheckpointStore | undefined {
  return store instanceof SqliteStore || isPostgresStore(store) ? store.langgraph : undefined;
}

export function threadsTable(threads: readonly GraphThreadRecord[], now: number): string {
  const rows = [['THREAD', 'CHECKPOINTS', 'WRITES', 'STEP', 'UPDATED', 'EXPIRES']];
  for (const t of threads)
    rows.push([
      t.threadId,
      String(t.checkpoints),
      String(t.writes),
      t.lastStep === null ? '-' : String(t.lastStep),
      new Date(t.updatedAt).toISOString(),
      t.expiresAt === null ? 'never' : `in ${formatDuration(Math.max(0, t.expiresAt - now))}`,
    ]);
  return table(rows);
}

/** `baton show <thread id>`: the thread's checkpoints, newest first, per namespace. */
export async function describeThread(
  graphs: GraphCheckpointStore,
  thread: GraphThreadRecord,
  json: boolean,
): Promise<string> {
  const checkpoints = await graphs.listCheckpoints({ threadId: thread.threadId, limit: 1_000 });
  const rows = checkpoints.map(({ row, writes }) => ({
    ns: row.ns,
    checkpointId: row.checkpointId,
    parentCheckpointId: row.parentCheckpointId,
    step: row.step,
    source: row.source,
    createdAt: row.createdAt,
    bytes: row.checkpoint.byteLength,
    channels: Object.keys(row.channelVersions).length,
    writes: writes.map((w) => ({ taskId: w.taskId, channel: w.channel, idx: w.idx })),
  }));
  if (json) return JSON.stringify({ thread, checkpoints: rows });
  const out = [
    `langgraph thread ${thread.threadId}`,
    `checkpoints ${thread.checkpoints}   pending writes ${thread.writes}   created ${new Date(thread.createdAt).toISOString()}   updated ${new Date(thread.updatedAt).toISOString()}`,
    `retention  ${thread.expiresAt === null ? 'kept until deleted' : `expires ${new Date(thread.expiresAt).toISOString()}`}`,
    '',
    'checkpoints (newest first)',
  ];
  const t = [['NS', 'STEP', 'SOURCE', 'CHECKPOINT', 'CHANNELS', 'WRITES', 'SAVED']];
  for (const r of rows)
    t.push([
      r.ns || '(root)',
      r.step === null ? '-' : String(r.step),
      r.source ?? '-',
      r.checkpointId,
      String(r.channels),
      r.writes.length === 0
        ? '-'
        : `${r.writes.length} (${[...new Set(r.writes.map((w) => w.channel))].join(', ')})`,
      new Date(r.createdAt).toISOString(),
    ]);
  out.push(table(t).replace(/^/gm, '  '));
  if (thread.checkpoints > rows.length) out.push(`  … ${thread.checkpoints - rows.length} older`);
  return out.join('\n');
}
