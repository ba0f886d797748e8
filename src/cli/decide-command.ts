/** `baton decide <run> <choice>`: answers the escalation a run is waiting on, from any process. */
import { readFileSync } from 'node:fs';
import { BatonError, isTerminal } from '../core/index.ts';
import { createBaton, runMetaOf } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import { parseJsonArg } from './output.ts';
import { batonOptions, type CommonOptions, openStore } from './run-commands.ts';

export async function decideCommand(
  id: string,
  choice: string | undefined,
  options: CommonOptions & { mode?: string; input?: string },
): Promise<number> {
  const store = await openStore(options.db, true);
  // No worker: the answer is one transition; whoever runs the worker picks the run up from there.
  const baton = createBaton({ ...batonOptions(options, store), worker: false });
  try {
    const run = await baton.getRun(id);
    if (!run)
      throw new BatonError('RUN_NOT_FOUND', `no run with id ${id} in ${store.location}`, {
        data: { runId: id },
      });
    const pending = runMetaOf(run).decision;
    if (choice === undefined) {
      if (!pending)
        throw new BatonError('RUN_CONFLICT', `run ${id} is not waiting for a decision (it is ${run.status})`);
      const out = options.json
        ? JSON.stringify(pending.request)
        : `${pending.request.message}\n\nanswer with: baton decide ${id} <${pending.request.choices.map((c) => c.id).join('|')}>`;
      process.stdout.write(`${out}\n`);
      return 0;
    }
    const answer = {
      choice,
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
      ...(options.input !== undefined
        ? { input: parseJsonArg(options.input, '--input', (p) => readFileSync(p, 'utf8')) }
        : {}),
    };
    const next = await baton.decide(id, answer, 'cli');
    process.stdout.write(
      options.json
        ? `${JSON.stringify({ id, status: next.status, waitReason: next.waitReason })}\n`
        : `run ${id}: ${choice} → now ${next.status}${afterDecision(next, await baton.getRun(next.rootId))}\n`,
    );
    return 0;
  } finally {
    await baton.close();
    await store.close();
  }
}

/** What happens next, so the advice never re-runs finished work. */
function afterDecision(run: RunRecord, root: RunRecord | undefined): string {
  if (root && root.id !== run.id)
    return isTerminal(root.status)
      ? `; its flow ${root.id} is over (${root.status}), nothing to resume`
      : ` (its flow continues with \`baton resume ${root.id}\`, or a worker on this database)`;
  if (run.status === 'queued') return ' (a worker will continue it; `baton resume` runs it here)';
  if (isTerminal(run.status))
    return `: the run is over, nothing to resume (see it with \`baton show ${run.id}\`)`;
  return '';
}

/** `baton signal <run> <name> [--payload <json|@file>]`: sends a signal a ctx.waitFor reads once. */
export async function signalCommand(
  id: string,
  name: string,
  options: CommonOptions & { payload?: string },
): Promise<number> {
  const store = await openStore(options.db, true);
  // No worker: the signal (and waking the run) is one write; a worker on this database runs it.
  const baton = createBaton({ ...batonOptions(options, store), worker: false });
  try {
    const payload =
      options.payload === undefined
        ? null
        : parseJsonArg(options.payload, '--payload', (p) => readFileSync(p, 'utf8'));
    const sent = await baton.signal(id, name, payload);
    const run = await baton.getRun(id);
    process.stdout.write(
      options.json
        ? `${JSON.stringify({ ...sent, status: run?.status ?? null })}\n`
        : `signal ${name} sent to run ${id} (${sent.signalId}); the run is ${run?.status ?? 'gone'}\n`,
    );
    return 0;
  } finally {
    await baton.close();
    await store.close();
  }
}
