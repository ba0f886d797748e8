/**
 * What one TTL sweep does, as data: the statements of its one transaction (written once, run by the
 * sweeper thread or, for a memory database, on the store's own connection), and how large a batch
 * fits the slice, learnt from what earlier sweeps cost (pure; sweeper.ts applies it).
 */

/** Tables whose rows belong to one run (`run_id`), deleted with it. */
const OWNED_TABLES = ['steps', 'checkpoints', 'partials', 'timers', 'deliveries', 'signals'] as const;

/** The expired roots of one batch are picked into this connection-private table, then their trees go. */
const ROOTS = 'temp.baton_sweep_roots';
const IN_TREES = `root_id IN (SELECT id FROM ${ROOTS})`;

/** Free pages returned to the disk per sweep (incremental auto-vacuum) when the slice has room. */
export const VACUUM_PAGES = 64;

export const SWEEP_SQL = {
  prepare: `CREATE TEMP TABLE IF NOT EXISTS baton_sweep_roots (id TEXT PRIMARY KEY) WITHOUT ROWID`,
  /** Parameter: now. Read on the store's connection first: nothing expired needs no thread, no hold. */
  anyExpired:
    'SELECT 1 FROM runs WHERE parent_id IS NULL AND expires_at IS NOT NULL AND expires_at <= ? LIMIT 1',
  clear: `DELETE FROM ${ROOTS}`,
  /** Parameters: now, batch. Its changes are the trees picked. */
  pick: `INSERT INTO ${ROOTS} (id) SELECT id FROM runs WHERE parent_id IS NULL AND expires_at IS NOT NULL AND expires_at <= ? LIMIT ?`,
  /** In this order; the last one's changes are the runs deleted. */
  deletes: [
    // A root's own events through events_run, the other runs' through the partial events_root
    // (migration 0027): together every event whose root_id is a picked root.
    `DELETE FROM events WHERE run_id IN (SELECT id FROM ${ROOTS}) AND root_id = run_id`,
    `DELETE FROM events WHERE ${IN_TREES} AND root_id <> run_id`,
    ...OWNED_TABLES.map((t) => `DELETE FROM ${t} WHERE run_id IN (SELECT id FROM runs WHERE ${IN_TREES})`),
    `DELETE FROM runs WHERE ${IN_TREES}`,
  ],
  vacuum: `PRAGMA incremental_vacuum(${VACUUM_PAGES})`,
} as const;

/**
 * A sweep's default slice: a quarter of the write slice. Deleting expired runs has no deadline, so
 * it holds the writes a quarter as long as deadline work may: they wait for it (the event loop does
 * not, once the sweep runs on its own thread), and a thread preempted inside its transaction holds
 * them for the wait too.
 */
export const SWEEP_SLICE_MS = 1;

/** The share of the slice a sweep plans its deletes, COMMIT and vacuum into. */
const PLANNED_SHARE = 0.75;

/** The most expired trees one transaction deletes (`gc`'s long slices reach it; fewer commits). */
export const MAX_BATCH = 4_096;

/**
 * What a sweep costs, learnt per store (ms): deleting one expired tree, its share of the COMMIT that
 * writes the freed pages, and one incremental vacuum step. A batch is sized to the slice with the
 * COMMIT and the vacuum counted in it: writes wait for the whole transaction, not only the deletes.
 */
export interface SweepCosts {
  treeMs: number;
  commitPerTreeMs: number;
  vacuumMs: number;
}

/** A first guess of 0.1 ms a tree (measured: 0.02-0.05 with a few events each) keeps the first batch small. */
export function initialCosts(): SweepCosts {
  return { treeMs: 0.1, commitPerTreeMs: 0, vacuumMs: 0 };
}

export interface SweepPlan {
  now: number;
  batch: number;
  /** Whether to return VACUUM_PAGES free pages to the disk after the deletes. */
  vacuum: boolean;
}

/** What one sweep transaction did and how long its parts took (ms). */
export interface SweepOutcome {
  trees: number;
  runs: number;
  workMs: number;
  /** -1 when no vacuum step ran. */
  vacuumMs: number;
  commitMs: number;
}

/**
 * Half the planned slice goes to the batch (a tree's cost varies with its events and the pages it
 * touches; the other quarter of the slice is for BEGIN, picking the roots, a dearer tree); the
 * vacuum step goes in when the rest has room for it.
 */
export function planSweep(costs: SweepCosts, sliceMs: number, now: number, vacuum: boolean): SweepPlan {
  const planned = sliceMs * PLANNED_SHARE;
  const perTree = costs.treeMs + costs.commitPerTreeMs;
  const batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(planned / perTree / 2)));
  const room = planned - batch * perTree;
  return { now, batch, vacuum: vacuum && room > costs.vacuumMs };
}

/** Up at once, down slowly: one cheap batch must not make the next one too large. */
function learn(known: number, seen: number): number {
  return seen > known ? seen : 0.75 * known + 0.25 * seen;
}

/**
 * How many ordinary commits one sweep commit counts as for the checkpointer (which asks for a
 * checkpoint every CHECKPOINT_EVERY_COMMITS commits of a few pages each): a deleted tree rewrites
 * about a page of the runs table and its indexes, and more with events, so one commit per 16 trees
 * on top of the commit itself. Uncounted, a backlog swept on the thread grew the WAL with no
 * checkpoint at all (20,000 runs: 371 sweeps, a 24 MB WAL, 0 checkpoints).
 */
export function sweepCommitWeight(out: SweepOutcome): number {
  return 1 + Math.floor(out.trees / 16);
}

/** Folds a sweep's timings into the costs the next plan uses. */
export function learnSweep(costs: SweepCosts, out: SweepOutcome): void {
  if (out.trees === 0) return;
  // A clock that measures 0 (a ManualClock): keep the guess rather than learn that trees are free.
  if (out.workMs > 0) costs.treeMs = learn(costs.treeMs, out.workMs / out.trees);
  if (out.vacuumMs > 0) costs.vacuumMs = learn(costs.vacuumMs, out.vacuumMs);
  // Averaged, not learnt up at once: one stall of the disk says little about the next commit.
  if (out.commitMs > 0) {
    const seen = out.commitMs / out.trees;
    costs.commitPerTreeMs = costs.commitPerTreeMs === 0 ? seen : 0.75 * costs.commitPerTreeMs + 0.25 * seen;
  }
}
