/**
 * The durable waits of a task body that need no more than the attempt's memo: ctx.invoke (a
 * memoized child id), ctx.sleep / ctx.sleepUntil (a memoized wake time) and the signal read behind
 * ctx.waitFor and ctx.requestApproval (a memoized signal, or a memoized timeout counted from the
 * first call).
 * While one is not over, the attempt suspends through its DurableWaits.
 */
import type { ZodType } from 'zod';
import { BatonError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { Clock } from '../time/index.ts';
import type { ApprovalWait, DurableWaits } from './durable-waits.ts';
import { childIdOf, type InvokeOutcome, outcomeOf } from './invoke-child.ts';
import type { WaitForResult } from './task-context.ts';

/** Signal names: what `baton signal`, the HTTP route and ctx.waitFor accept. */
export const SIGNAL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const SIGNAL_NAME_EXPECTED = 'a signal name of 1-128 letters, digits, _ . : or -';

/** What a ctx.waitFor records: the signal it read, or the moment it timed out. */
export type SignalStep =
  | { signal: { id: string; payload: unknown; sentAt: number }; timeout?: undefined }
  | { timeout: { at: number }; signal?: undefined };

/** The parts of an attempt's context the durable calls use. */
export interface DurableHost {
  readonly waits: DurableWaits;
  readonly clock: Clock;
  /** The run's deadline (its budget's end), if it has one: a durable sleep may not outlast it. */
  readonly deadlineAt: number | null;
  stepLookup(key: string): { hit: boolean; value?: unknown };
  stepRecord(key: string, value: unknown, durationMs: number): Promise<unknown>;
  ensureOpen(what: string): void;
  readSignal(name: string, key: string): Promise<SignalStep | undefined>;
  readonly runId: string;
  getRun(id: string): Promise<RunRecord | undefined>;
}

/**
 * Starts a child run (memoized: the child's id is derived from this call's key) and awaits its
 * outcome; while the child is open the attempt suspends (`waiting: child`).
 */
export async function invokeChild<O>(
  host: DurableHost,
  taskName: string,
  ownKey: string | undefined,
  start: (childId: string) => Promise<void>,
): Promise<InvokeOutcome<O>> {
  const key = host.waits.nextKey('invoke', ownKey);
  const found = host.stepLookup(key);
  const childId = found.hit ? (found.value as { childId: string }).childId : childIdOf(host.runId, key);
  const child = await host.waits.track(async () => {
    if (!found.hit) {
      await start(childId);
      await host.stepRecord(key, { childId }, 0);
    }
    return host.getRun(childId);
  });
  if (!child)
    throw new BatonError('RUN_NOT_FOUND', `the child run ${childId} of ctx.invoke("${taskName}") is gone`, {
      data: { key, childId },
    });
  const outcome = outcomeOf<O>(child);
  if (outcome) return outcome;
  return host.waits.wait({ kind: 'child', key, childId, timeoutAt: null });
}

/**
 * A durable sleep is a memoized step holding its wake time: the first call records it, and
 * every replay reads it back, so a sleep of an hour wakes an hour after the first call however
 * many times the body runs. While it is not over the attempt suspends (`waiting: timer`).
 */
export async function sleepAt(
  host: DurableHost,
  at: number,
  own: string | undefined,
  what: string,
): Promise<void> {
  const key = host.waits.nextKey('sleep', own);
  const found = host.stepLookup(key);
  let wakeAt: number;
  if (found.hit) wakeAt = (found.value as { wakeAt: number }).wakeAt;
  else {
    if (at <= host.clock.now()) return;
    const deadline = host.deadlineAt;
    if (deadline !== null && at > deadline)
      throw new BatonError(
        'INVALID_OPTION',
        `${what} until ${new Date(at).toISOString()} would wake after the run's time budget ends (${new Date(deadline).toISOString()})`,
        { data: { key, wakeAt: at, deadlineAt: deadline } },
      );
    await host.waits.track(() => host.stepRecord(key, { wakeAt: at }, 0));
    wakeAt = at;
  }
  if (wakeAt <= host.clock.now()) return;
  return host.waits.wait({ kind: 'timer', key, wakeAt });
}

/** Reads signal `name` as step `key`, or its timeout, or suspends until one of them (`waiting: signal`). */
export async function awaitSignal<T>(
  host: DurableHost,
  name: string,
  key: string,
  timeoutMs: number | null,
  schema: ZodType<T> | undefined,
  what: string,
  approval?: ApprovalWait,
): Promise<WaitForResult<T>> {
  const found = host.stepLookup(key);
  if (found.hit) return signalResult(found.value as SignalStep, name, schema);
  // The timeout is counted from the first call, whatever replays follow.
  let timeoutAt: number | null = null;
  if (timeoutMs !== null) {
    const untilKey = `${key}:until`;
    const until = host.stepLookup(untilKey);
    if (until.hit) timeoutAt = (until.value as { timeoutAt: number }).timeoutAt;
    else {
      const at = host.clock.now() + timeoutMs;
      await host.waits.track(() => host.stepRecord(untilKey, { timeoutAt: at }, 0));
      timeoutAt = at;
    }
  }
  host.ensureOpen(what);
  const read = await host.waits.track(() => host.readSignal(name, key));
  if (read) return signalResult(read, name, schema);
  const now = host.clock.now();
  if (timeoutAt !== null && timeoutAt <= now) {
    const value = (await host.waits.track(() =>
      host.stepRecord(key, { timeout: { at: now } }, 0),
    )) as SignalStep;
    return signalResult(value, name, schema);
  }
  return host.waits.wait({ kind: 'signal', key, name, timeoutAt, ...(approval ? { approval } : {}) });
}

function signalResult<T>(value: SignalStep, name: string, schema: ZodType<T> | undefined): WaitForResult<T> {
  if (value.timeout) return { status: 'timeout', timedOutAt: value.timeout.at };
  const { id, payload, sentAt } = value.signal;
  if (!schema) return { status: 'received', payload: payload as T, signalId: id, sentAt };
  const parsed = schema.safeParse(payload);
  if (!parsed.success)
    throw new BatonError(
      'INVALID_INPUT',
      `the payload of signal "${name}" does not match its schema: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `payload${i.path.length > 0 ? `.${i.path.join('.')}` : ''}: ${i.message}`)
        .join('; ')}`,
      { data: { signal: name, signalId: id } },
    );
  return { status: 'received', payload: parsed.data, signalId: id, sentAt };
}
