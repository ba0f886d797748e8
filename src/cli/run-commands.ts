/** `baton run` and `baton resume`: start or continue a run here, show it live, print how it ended. */
import { readFileSync } from 'node:fs';
import {
  BatonError,
  type DecisionRequest,
  FAST_MODE_WARNING,
  isBatonError,
  isTerminal,
} from '../core/index.ts';
import {
  type Baton,
  type BatonOptions,
  createBaton,
  endedByAnswer,
  type FlowDefinition,
  isTaskDefinition,
  type ResumeResult,
  type RunOutcome,
  runMetaOf,
  type TaskDefinition,
} from '../runtime/index.ts';
import { openStore as openStoreAt, type Store } from '../store/index.ts';
import { formatDuration, systemClock } from '../time/index.ts';
import { createLiveView } from './live-view.ts';
import type { CliConfig } from './load-config.ts';
import { loadModule, loadRunnable } from './load-definitions.ts';
import { ExitCode, parseJsonArg, preview } from './output.ts';
import { promptDecision } from './prompt-decision.ts';

export interface CommonOptions {
  db: string;
  json?: boolean;
  /** The configuration file's settings (empty without one). */
  config: CliConfig;
}

/** createBaton options from the configuration, with the command's store and extra tasks. */
export function batonOptions(
  options: CommonOptions,
  store: Store,
  tasks: readonly (TaskDefinition | FlowDefinition)[] = [],
): BatonOptions {
  const all = new Set<TaskDefinition>(options.config.taskDefs);
  for (const t of tasks) if (isTaskDefinition(t)) all.add(t);
  return { ...options.config.options, store, tasks: [...all] };
}

/** The store `--db` names (a SQLite file or a postgres:// URL), connected and ready. */
/**
 * `readonly`: commands that only look (ls, show) open a SQLite file read-only and write nothing, so
 * they work on a file they may not write. A file from an older Baton still needs its migrations:
 * then it is opened read-write once, as every command did before.
 */
export async function openStore(db: string, mustExist: boolean, readonly = false): Promise<Store> {
  if (!readonly) return openStoreAt(db, { mustExist });
  try {
    return await openStoreAt(db, { mustExist, readonly });
  } catch (err) {
    if (isBatonError(err, 'STORE_INVALID') && Array.isArray(err.data.missing))
      return openStoreAt(db, { mustExist });
    throw err;
  }
}

export interface FollowRunOptions {
  json?: boolean;
  /** Lines printed under the summary (e.g. what resume did). */
  notes?: string[];
  /** Print the run's output in the summary. @default true */
  showOutput?: boolean;
  /** Fold events that happened before now into the view without printing them (for resumes). @default false */
  quietPast?: boolean;
  /** Ask on the terminal when a run needs a decision. @default false */
  interactive?: boolean;
  /** Warnings already shown (not repeated from the run's log events); in --json output as `warnings`. */
  warnings?: string[];
}

/** Follows the run until it ends, showing it live (or quietly with --json), then summarizes it. */
export async function followRun(baton: Baton, id: string, options: FollowRunOptions = {}): Promise<number> {
  const json = options.json ?? false;
  const tty = Boolean(process.stderr.isTTY) && !json;
  const live = json
    ? undefined
    : createLiveView(id, { tty, now: () => baton.clock.now(), shown: new Set(options.warnings ?? []) });
  const pastUntil = options.quietPast ? await lastEventId(baton, id) : 0;
  const onSigint = () => {
    live?.stop();
    process.stderr.write(`\ninterrupted: handing the run back (resume it with \`baton resume ${id}\`)\n`);
    void baton.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSigint);
  try {
    let asked = false;
    for await (const e of baton.events(id)) {
      live?.onEvent(e, e.id <= pastUntil);
      if (e.type === 'decision:requested') {
        if (options.interactive && e.id > pastUntil) {
          live?.stop();
          await promptDecision(baton, e.runId, (e.data as unknown as { request: DecisionRequest }).request);
        } else asked = true;
      }
      // Nobody here to answer: once nothing else can move, leave the question durably waiting.
      if (asked && (await onlyDecisionsLeft(baton, id))) {
        live?.stop();
        return await waitingForDecision(baton, id, json);
      }
    }
  } finally {
    live?.stop();
    process.removeListener('SIGINT', onSigint);
  }
  const outcome = await baton.result(id);
  return summarize(outcome, json, options.notes ?? [], options.showOutput ?? true, options.warnings ?? []);
}

async function onlyDecisionsLeft(baton: Baton, id: string): Promise<boolean> {
  const root = await baton.getRun(id);
  if (!root || isTerminal(root.status)) return false;
  const members = root.kind === 'flow' ? await baton.listRuns({ parentId: id, limit: 10_000 }) : [root];
  const open = members.filter((m) => !isTerminal(m.status));
  return (
    open.some((m) => m.waitReason === 'decision') &&
    open.every((m) => m.status === 'waiting' && m.waitReason !== 'timer')
  );
}

async function waitingForDecision(baton: Baton, id: string, json: boolean): Promise<number> {
  const root = await baton.getRun(id);
  const members =
    root?.kind === 'flow' ? await baton.listRuns({ parentId: id, limit: 10_000 }) : root ? [root] : [];
  const waiting = members.filter((m) => m.waitReason === 'decision');
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ id, status: 'waiting', decisions: waiting.map((m) => ({ runId: m.id, request: runMetaOf(m).decision?.request })) })}\n`,
    );
  } else {
    for (const m of waiting) {
      const request = runMetaOf(m).decision?.request;
      if (!request) continue;
      process.stdout.write(
        `\n${request.message}\n\nrun ${m.id} is waiting for a decision. Answer it with:\n  baton decide ${m.id} <${request.choices.map((c) => c.id).join('|')}>\n${adviceAfter(request, m.id === id, id)}\n`,
      );
    }
  }
  return ExitCode.waiting;
}

/** Choices after which the run has work left; the others end it. */
const CONTINUING: ReadonlySet<string> = new Set(['retry_extended', 'different_mode']);

/** What to do after answering, per choice: only a run with work left is resumed. */
export function adviceAfter(request: DecisionRequest, isRoot: boolean, rootId: string): string {
  const ids = request.choices.map((c) => c.id);
  const going = ids.filter((c) => CONTINUING.has(c));
  const ending = ids.filter((c) => !CONTINUING.has(c));
  const list = (xs: string[]) => xs.join(', ').replace(/, ([^,]*)$/, ' or $1');
  if (!isRoot)
    return `then continue the flow with: baton resume ${rootId}${ids.includes('abandon') ? ' (abandon ends the whole flow)' : ''}`;
  const lines: string[] = [];
  if (going.length > 0)
    lines.push(
      `after ${list(going)}: continue it here with baton resume ${rootId} (or let a baton worker on this database take it)`,
    );
  if (ending.length > 0)
    lines.push(
      `after ${list(ending)}: the run is over, nothing to resume (see it with baton show ${rootId})`,
    );
  return lines.join('\n');
}

async function lastEventId(baton: Baton, id: string): Promise<number> {
  let last = 0;
  for (;;) {
    const batch = await baton.store.readEvents({ rootId: id, afterId: last, limit: 10_000 });
    if (batch.length === 0) return last;
    last = batch.at(-1)?.id ?? last;
  }
}

function summarize(
  outcome: RunOutcome,
  json: boolean,
  notes: string[],
  showOutput = true,
  warnings: string[] = [],
): number {
  const { run } = outcome;
  const code =
    outcome.status === 'succeeded' || outcome.status === 'partial' ? ExitCode.ok : ExitCode.runFailed;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ id: outcome.id, status: outcome.status, output: outcome.output ?? null, error: run.error, notes, ...(warnings.length > 0 ? { warnings } : {}) })}\n`,
    );
    return code;
  }
  const took = run.finishedAt && run.startedAt ? ` in ${formatDuration(run.finishedAt - run.startedAt)}` : '';
  const lines = [`\nrun ${outcome.id} ${outcome.status}${took}`];
  for (const n of notes) lines.push(`  ${n}`);
  if (outcome.error) lines.push(`  error: ${outcome.error.message}`);
  if (showOutput && outcome.output !== undefined)
    lines.push(`  output: ${preview(outcome.output).replace(/\n/g, '\n  ')}`);
  lines.push(`  see it all: baton show ${outcome.id}   (npm run baton -- show ${outcome.id})`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return code;
}

export async function runCommand(
  file: string,
  options: CommonOptions & {
    input?: string;
    tasks?: string;
    flow?: string;
    id?: string;
    budget?: string;
    fastMode?: boolean;
    mode?: string;
    unattended?: boolean;
  },
): Promise<number> {
  const interactive =
    Boolean(process.stdin.isTTY && process.stderr.isTTY) && !options.json && !options.unattended;
  const input =
    options.input === undefined ? {} : parseJsonArg(options.input, '--input', (p) => readFileSync(p, 'utf8'));
  const { what, defs } = await loadRunnable(file, options);
  const store = await openStore(options.db, false);
  const baton = createBaton(batonOptions(options, store, defs.tasks));
  try {
    const run = await baton.start(what, input as never, {
      source: defs.source ?? undefined,
      ...(options.id ? { id: options.id } : {}),
      ...(options.budget ? { budget: options.budget } : {}),
      ...(options.fastMode ? { fast: true } : {}),
      ...(options.mode ? { mode: options.mode } : {}),
      ...(interactive
        ? { escalation: 'ask' as const }
        : options.unattended
          ? { escalation: 'policy' as const }
          : {}),
    });
    if (!options.json) process.stderr.write(`started ${run.id} on ${store.location}\n`);
    // The warning once, here: the steps' own copies (one log event per step) are not repeated.
    if (options.fastMode && !options.json) process.stderr.write(`${FAST_MODE_WARNING}\n`);
    return await followRun(baton, run.id, {
      json: options.json ?? false,
      interactive,
      ...(options.fastMode ? { warnings: [FAST_MODE_WARNING] } : {}),
    });
  } finally {
    await baton.close();
    await store.close();
  }
}

export async function resumeCommand(
  id: string,
  options: CommonOptions & { tasks?: string; again?: boolean },
): Promise<number> {
  const store = await openStore(options.db, true);
  try {
    const run = await store.getRun(id);
    if (!run)
      throw new BatonError('RUN_NOT_FOUND', `no run with id ${id} in ${store.location}`, {
        data: { runId: id },
      });
    // A run a person's answer ended is only reported (no tasks needed), unless --again.
    const leftAsAnswered = isTerminal(run.status) && !options.again && endedByAnswer(run) !== undefined;
    const source = leftAsAnswered ? undefined : (options.tasks ?? run.source);
    const defs = source ? await loadModule(source) : undefined;
    const baton = createBaton({ ...batonOptions(options, store, defs?.tasks), clock: systemClock });
    try {
      if (!leftAsAnswered) await checkTasksKnown(baton, id);
      const resumed = await baton.resume(id, 'cli', { again: options.again ?? false });
      const notes = [describeAction(resumed.resumed, id)];
      if (!options.json) process.stderr.write(`${notes[0]}\n`);
      const after = await store.getRun(id);
      if (after && isTerminal(after.status))
        return summarize(await baton.result(id), options.json ?? false, notes);
      const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY) && !options.json;
      return await followRun(baton, id, { json: options.json ?? false, notes, quietPast: true, interactive });
    } finally {
      await baton.close();
    }
  } finally {
    await store.close();
  }
}

function describeAction(resumed: ResumeResult, id: string): string {
  switch (resumed.action) {
    case 'ended_by_answer': {
      const e = resumed.endedBy;
      return `the run was ended by ${e?.by ?? 'a person'}'s answer "${e?.choice ?? ''}" (${e?.at ?? ''}): nothing was run again. To run it again from its last checkpoint: baton resume ${id} --again`;
    }
    case 'already_succeeded':
      return 'the run had already succeeded: here is its stored result (nothing was run again)';
    case 'taken_back':
      return 'the run was held by a process that is gone: taken back, continuing from its last checkpoint';
    case 'reopened':
      return 'the flow was reopened: its failed steps run again from their checkpoints; finished steps are kept';
    case 'requeued':
      return 'the run was queued again and continues from its last checkpoint';
    default:
      return 'continuing the run';
  }
}

/** A run whose tasks this process does not know would wait forever: say so instead. */
async function checkTasksKnown(baton: Baton, id: string): Promise<void> {
  const run = await baton.getRun(id);
  if (!run) return;
  const runs = run.kind === 'flow' ? await baton.listRuns({ parentId: id, limit: 10_000 }) : [run];
  const missing = [...new Set(runs.filter((r) => r.status !== 'succeeded').map((r) => r.name))].filter(
    (n) => !baton.internals.tasks.has(n),
  );
  if (missing.length > 0)
    throw new BatonError(
      'TASK_NOT_FOUND',
      `run ${id} needs task(s) ${missing.join(', ')}, which no loaded module defines; pass --tasks <module>`,
      { data: { missing } },
    );
}
