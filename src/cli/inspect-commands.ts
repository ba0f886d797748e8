/** `baton ls`, `baton show` and `baton gc`: reading the store without running anything. */
import { BatonError, isRunStatus } from '../core/index.ts';
import { runMetaOf } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import { formatDuration } from '../time/index.ts';
import { preview, table } from './output.ts';
import { type CommonOptions, openStore } from './run-commands.ts';
import { describeThread, graphsOf, threadsTable } from './thread-commands.ts';
import { describeEvent } from './view-model.ts';

interface ContextReport {
  total_input_data: Record<string, { tokens: number; priority: number }>;
  total_tokens: number;
  context_limit: number;
  overflow: number;
  resolution: {
    final_tokens: number;
    within_limit: boolean;
    actions: Array<{
      data: string;
      action: string;
      original_tokens: number;
      reduced_tokens: number;
      filter?: string;
    }>;
  };
}

function took(r: RunRecord): string {
  if (r.startedAt === null) return '';
  return r.finishedAt === null ? 'running' : formatDuration(r.finishedAt - r.startedAt);
}

export async function lsCommand(
  options: CommonOptions & { status?: string; limit?: string; threads?: boolean },
): Promise<number> {
  if (options.status !== undefined && !isRunStatus(options.status))
    throw new BatonError(
      'INVALID_INPUT',
      `--status must be one of queued, running, waiting, succeeded, partial, failed, cancelled, expired, got "${options.status}"`,
    );
  const limit = options.limit === undefined ? 50 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new BatonError('INVALID_INPUT', `--limit must be a positive integer, got "${options.limit}"`);
  const store = await openStore(options.db, true, true);
  try {
    if (options.threads) {
      const graphs = graphsOf(store);
      const threads = graphs ? await graphs.listThreads(limit) : [];
      if (options.json) process.stdout.write(`${JSON.stringify(threads)}\n`);
      else
        process.stdout.write(
          threads.length === 0 ? 'no LangGraph threads\n' : `${threadsTable(threads, graphs?.now() ?? 0)}\n`,
        );
      return 0;
    }
    const runs = await store.listRuns({
      ...(options.status ? { status: options.status as never } : {}),
      limit,
    });
    if (options.json) {
      process.stdout.write(`${JSON.stringify(runs.map(({ input: _i, output: _o, ...rest }) => rest))}\n`);
      return 0;
    }
    // LangGraph threads kept in the same database are listed after the runs (not under --status).
    const graphs = graphsOf(store);
    const threads = graphs && options.status === undefined ? await graphs.listThreads(limit) : [];
    const threadsPart =
      threads.length > 0 ? `\nlanggraph threads\n${threadsTable(threads, graphs?.now() ?? 0)}\n` : '';
    if (runs.length === 0) {
      process.stdout.write(`no runs\n${threadsPart}`);
      return 0;
    }
    const rows = [['ID', 'NAME', 'KIND', 'STATUS', 'CREATED', 'TOOK']];
    for (const r of runs)
      rows.push([
        r.id,
        r.name,
        r.kind,
        r.status + (r.waitReason ? `:${r.waitReason}` : ''),
        new Date(r.createdAt).toISOString(),
        took(r),
      ]);
    process.stdout.write(`${table(rows)}\n${threadsPart}`);
    return 0;
  } finally {
    await store.close();
  }
}

export async function showCommand(id: string, options: CommonOptions): Promise<number> {
  const store = await openStore(options.db, true, true);
  try {
    const run = await store.getRun(id);
    const graphs = graphsOf(store);
    const thread = run || !graphs ? undefined : await graphs.getThread(id);
    if (graphs && thread) {
      process.stdout.write(`${await describeThread(graphs, thread, options.json ?? false)}\n`);
      return 0;
    }
    if (!run)
      throw new BatonError('RUN_NOT_FOUND', `no run with id ${id} in ${store.location}`, {
        data: { runId: id },
      });
    const steps = run.kind === 'flow' ? await store.listRuns({ parentId: id, limit: 10_000 }) : [];
    // Runs a task started with ctx.invoke.
    const children = run.kind === 'task' ? await store.listRuns({ parentId: id, limit: 10_000 }) : [];
    const members = [run, ...steps];
    const events = await store.readEvents({
      ...(run.rootId === run.id ? { rootId: id } : { runId: id }),
      limit: 10_000,
    });
    const checkpoints = Object.fromEntries(
      await Promise.all(members.map(async (m) => [m.id, await store.listCheckpoints(m.id)] as const)),
    );
    const partials = Object.fromEntries(
      await Promise.all(members.map(async (m) => [m.id, await store.listPartials(m.id)] as const)),
    );
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ run, steps, children, events, checkpoints, partials })}\n`);
      return 0;
    }
    const out: string[] = [];
    out.push(`${run.kind} ${run.name}  ${run.id}`);
    out.push(
      `status    ${run.status}${run.waitReason ? ` (waiting: ${run.waitReason})` : ''}   attempts ${run.attempt}   took ${took(run) || '-'}`,
    );
    if (run.budgetMs !== null)
      out.push(
        `budget    ${formatDuration(run.budgetMs)}${run.deadlineAt ? `, deadline ${new Date(run.deadlineAt).toISOString()}` : ''}`,
      );
    if (steps.length > 0) {
      out.push('', 'steps');
      const rows = [['STEP', 'TASK', 'STATUS', 'TRIES', 'TOOK', 'CHECKPOINTS', 'FINDINGS']];
      for (const s of steps)
        rows.push([
          s.stepId ?? s.id,
          s.name,
          s.status,
          String(s.attempt),
          took(s),
          String(checkpoints[s.id]?.length ?? 0),
          String(partials[s.id]?.reduce((n, p) => n + p.findings.length, 0) ?? 0),
        ]);
      out.push(table(rows).replace(/^/gm, '  '));
    }
    if (children.length > 0) {
      out.push('', 'children (ctx.invoke)');
      const rows = [['RUN', 'TASK', 'STATUS', 'TRIES', 'TOOK']];
      for (const c of children)
        rows.push([
          c.id,
          c.name,
          c.status + (c.waitReason ? ` (${c.waitReason})` : ''),
          String(c.attempt),
          took(c),
        ]);
      out.push(table(rows).replace(/^/gm, '  '));
    }
    out.push('', 'timeline');
    const t0 = events[0]?.at ?? run.createdAt;
    for (const e of events) {
      const who = e.runId === id ? '' : e.runId.slice(id.length + 1) || e.runId;
      out.push(
        `  +${formatDuration(e.at - t0).padEnd(8)} ${who.padEnd(12)} ${e.type.padEnd(18)} ${describeEvent(e)}`,
      );
    }
    const cps = members.flatMap((m) => (checkpoints[m.id] ?? []).map((c) => ({ m, c })));
    if (cps.length > 0) {
      out.push('', 'checkpoints');
      for (const { m, c } of cps) {
        const r = c.record as Record<string, unknown>;
        const ta = r.time_assessment as { time_status?: string; remaining_seconds?: number } | undefined;
        out.push(
          `  ${(m.stepId ?? m.name).padEnd(12)} #${c.seq}  ${String(r.checkpoint_id ?? '')}  items ${r.items_analyzed ?? '-'}  progress ${r.progress_percentage ?? '-'}%${ta ? `  ${ta.time_status}, ${ta.remaining_seconds}s left` : ''}${c.corrupt ? '  (corrupt)' : ''}`,
        );
      }
    }
    const ps = members.flatMap((m) => (partials[m.id] ?? []).map((p) => ({ m, p })));
    if (ps.length > 0) {
      out.push('', 'partial findings');
      for (const { m, p } of ps)
        out.push(`  ${(m.stepId ?? m.name).padEnd(12)} ${preview(p.findings, 3).replace(/\n/g, ' ')}`);
    }
    const plans = events.filter((e) => e.type === 'context:planned');
    if (plans.length > 0) out.push('', 'context budgets (protocol 002 context_management)');
    for (const e of plans) {
      const cm = (e.data as unknown as { report: { context_management: ContextReport } }).report
        .context_management;
      const who = e.runId === id ? run.name : e.runId.slice(id.length + 1) || e.runId;
      out.push(
        `  ${who}: ${cm.total_tokens} tokens in, limit ${cm.context_limit}, overflow ${cm.overflow} → ${cm.resolution.final_tokens} (${cm.resolution.within_limit ? 'within limit' : 'OVER LIMIT'})`,
      );
      for (const [name, d] of Object.entries(cm.total_input_data))
        out.push(`      ${name.padEnd(24)} ${String(d.tokens).padStart(7)} tokens  priority ${d.priority}`);
      for (const a of cm.resolution.actions)
        out.push(
          `      ${a.action} ${a.data}: ${a.original_tokens} → ${a.reduced_tokens}${a.filter ? ` (${a.filter})` : ''}`,
        );
    }
    const ts = run.meta.timeout_state as
      | {
          agents_spawned: number;
          agents_completed: number;
          agents_timed_out: number;
          overall_status: string;
          timeout_details: Array<Record<string, unknown>>;
        }
      | undefined;
    if (ts) {
      out.push(
        '',
        `timeouts  ${ts.agents_spawned} spawned, ${ts.agents_completed} completed, ${ts.agents_timed_out} timed out → ${ts.overall_status}`,
      );
      for (const d of ts.timeout_details)
        out.push(
          `          ${d.mode}: timed out at ${d.timeout_at}s, ${d.retries} retries, ended ${d.final_status}`,
        );
    }
    for (const m of members) {
      const who = m.stepId ?? m.name;
      const meta = runMetaOf(m);
      const pending = meta.decision;
      if (pending)
        out.push(
          '',
          `decision needed (${who}):`,
          ...pending.request.message.split('\n').map((l) => `  ${l}`),
          `  answer: baton decide ${m.id} <${pending.request.choices.map((c) => c.id).join('|')}>`,
        );
      for (const d of meta.decisions) out.push(`decided   ${who}: ${d.answer.choice} by ${d.by} at ${d.at}`);
    }
    if (run.error) out.push('', `error     ${run.error.code}: ${run.error.message}`);
    if (run.output !== undefined)
      out.push('', `result    ${preview(run.output, 40).replace(/\n/g, '\n          ')}`);
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** How long one `baton gc` transaction deletes before it commits. */
const GC_SLICE_MS = 200;

export async function gcCommand(options: CommonOptions): Promise<number> {
  const store = await openStore(options.db, true);
  try {
    let total = 0;
    for (;;) {
      // No deadlines to protect here: large slices, few commits.
      const { runs } = await store.sweep({ sliceMs: GC_SLICE_MS });
      total += runs;
      if (runs === 0) break;
    }
    let threads = 0;
    for (;;) {
      const n = (await graphsOf(store)?.sweepThreads()) ?? 0;
      threads += n;
      if (n === 0) break;
    }
    if (options.json) process.stdout.write(`${JSON.stringify({ deleted: total, threads })}\n`);
    else
      process.stdout.write(
        `deleted ${total} expired run(s) and everything they owned${threads > 0 ? `, and ${threads} expired LangGraph thread(s)` : ''}\n`,
      );
    return 0;
  } finally {
    await store.close();
  }
}
