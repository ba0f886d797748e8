/**
 * How a flow moves when one of its steps finishes. Pure: the store calls it inside the same
 * transaction that records the step's end, so a crash can never leave a flow between "step done"
 * and "next steps queued".
 *
 * Rules: a step waiting on dependencies becomes ready when every dependency ended in a usable state
 * (succeeded, or partial — whose output downstream steps see marked incomplete) or has finished
 * executing and only waits for its scheduled delivery time (its output exists; the user just has
 * not been told yet). A flow with a held delivery is not finished until it is delivered. If any dependency
 * failed, was cancelled or expired, the step is cancelled too (it can never run). The flow ends when
 * every step has ended: failed if any step failed, else cancelled if any was cancelled, else partial
 * if any step ended partial, else succeeded.
 */
import { isTerminal, isUsable, type RunStatus, type WaitReason } from './run-state.ts';

export interface FlowStepState {
  stepId: string;
  status: RunStatus;
  waitReason: WaitReason | null;
  dependsOn: readonly string[];
}

export interface FlowDecision {
  /** Steps whose dependencies are all usable now: queue them. */
  ready: string[];
  /** Steps that can never run, with the dependency that ended badly. */
  blocked: Array<{ stepId: string; dependency: string; dependencyStatus: RunStatus }>;
  /** Set when every step has ended (counting the blocked ones as cancelled). */
  finished?: { status: RunStatus; incomplete: string[] };
}

export function decideFlow(steps: readonly FlowStepState[]): FlowDecision {
  const effective = new Map<string, RunStatus>(steps.map((s) => [s.stepId, s.status]));
  const ready: string[] = [];
  const blocked: FlowDecision['blocked'] = [];

  // Blocking propagates down chains (a → b → c: if a failed, c is blocked too). A worklist over the
  // reverse edges does it in one pass over the graph, whatever order the plan lists its steps in
  // (a fixpoint over the list took one pass per link of a chain written backwards).
  const dependents = new Map<string, FlowStepState[]>();
  for (const s of steps)
    for (const d of s.dependsOn) {
      const list = dependents.get(d);
      if (list) list.push(s);
      else dependents.set(d, [s]);
    }
  const isBad = (id: string) => {
    const st = effective.get(id);
    return st !== undefined && isTerminal(st) && !isUsable(st);
  };
  const pending = steps.filter((s) => isBad(s.stepId)).map((s) => s.stepId);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const s of dependents.get(next) ?? []) {
      if (effective.get(s.stepId) !== 'waiting' || s.waitReason !== 'dependency') continue;
      // The first bad dependency in the step's own order, as the message has always named it.
      const bad = s.dependsOn.find(isBad) as string;
      effective.set(s.stepId, 'cancelled');
      blocked.push({ stepId: s.stepId, dependency: bad, dependencyStatus: effective.get(bad) as RunStatus });
      pending.push(s.stepId);
    }
  }
  const held = new Set(
    steps.filter((s) => s.status === 'waiting' && s.waitReason === 'delivery').map((s) => s.stepId),
  );
  for (const s of steps) {
    if (effective.get(s.stepId) !== 'waiting' || s.waitReason !== 'dependency') continue;
    if (s.dependsOn.every((d) => held.has(d) || isUsable(effective.get(d) ?? 'failed'))) ready.push(s.stepId);
  }

  const decision: FlowDecision = { ready, blocked };
  const statuses = [...effective.values()];
  if (ready.length === 0 && statuses.every(isTerminal)) {
    const incomplete = steps.filter((s) => effective.get(s.stepId) === 'partial').map((s) => s.stepId);
    let status: RunStatus = 'succeeded';
    if (statuses.includes('failed')) status = 'failed';
    else if (statuses.includes('cancelled') || statuses.includes('expired')) status = 'cancelled';
    else if (incomplete.length > 0) status = 'partial';
    decision.finished = { status, incomplete };
  }
  return decision;
}
