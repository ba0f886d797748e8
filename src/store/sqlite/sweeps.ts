/**
 * The store's TTL sweeps: each plans one transaction from what earlier ones cost (sweep-plan.ts) and
 * runs it on the sweeper thread (sweeper.ts) or, where no second connection can open the database (a
 * memory database, a file outside WAL mode), on the store's own connection through its write queue.
 */
import type { SweepOptions, SweepResult } from '../store.ts';
import type { SqliteContext } from './sqlite-context.ts';
import {
  initialCosts,
  learnSweep,
  planSweep,
  SWEEP_SLICE_MS,
  SWEEP_SQL,
  type SweepOutcome,
  type SweepPlan,
} from './sweep-plan.ts';
import type { Sweeper } from './sweeper.ts';

export class Sweeps {
  private readonly costs = initialCosts();
  /** Whether freed pages can be returned to the disk (incremental auto-vacuum), read once. */
  private vacuum: boolean | undefined;
  private tableReady = false;

  constructor(
    private readonly ctx: SqliteContext,
    private readonly thread: Sweeper | undefined,
  ) {}

  /**
   * Deletes one batch of expired run trees sized to `sliceMs` (the deletes, their COMMIT and the
   * vacuum step together, at least one tree): the caller sweeps again until 0 runs come back. Freed
   * pages are reused by later writes; with incremental auto-vacuum a bounded number of them is also
   * returned to the disk when the slice has room.
   */
  async sweep(options: SweepOptions = {}): Promise<SweepResult> {
    this.vacuum ??= this.ctx.stmt('PRAGMA auto_vacuum').pluck().get() === 2;
    const plan = planSweep(this.costs, options.sliceMs ?? SWEEP_SLICE_MS, this.ctx.now(), this.vacuum);
    // Most sweeps find nothing: one indexed read says so without starting the thread (tens of ms of
    // CPU, at a worker's first tick, beside the claim that recovers a dead worker's runs) or
    // holding the writes.
    if (this.thread && this.ctx.stmt(SWEEP_SQL.anyExpired).get(plan.now) === undefined) return { runs: 0 };
    const out = this.thread ? await this.thread.sweep(plan) : await this.onLoop(plan);
    learnSweep(this.costs, out);
    // Cached roots of deleted runs must not outlive them.
    if (out.runs > 0) this.ctx.forgetRoots();
    return { runs: out.runs };
  }

  private async onLoop(plan: SweepPlan): Promise<SweepOutcome> {
    const ctx = this.ctx;
    let commitMs = 0;
    const out = await ctx.write((scope) => {
      if (!this.tableReady) {
        ctx.db.exec(SWEEP_SQL.prepare);
        this.tableReady = true;
      }
      const t0 = ctx.clock.monotonic();
      ctx.stmt(SWEEP_SQL.clear).run();
      const trees = ctx.stmt(SWEEP_SQL.pick).run(plan.now, plan.batch).changes;
      let runs = 0;
      if (trees > 0) for (const sql of SWEEP_SQL.deletes) runs = ctx.stmt(sql).run().changes;
      const t1 = ctx.clock.monotonic();
      let vacuumMs = -1;
      if (trees > 0 && plan.vacuum) {
        ctx.stmt(SWEEP_SQL.vacuum).run();
        vacuumMs = ctx.clock.monotonic() - t1;
      }
      scope.onCommit = (ms) => {
        commitMs = ms;
      };
      return { trees, runs, workMs: t1 - t0, vacuumMs };
    });
    return { ...out, commitMs };
  }
}
