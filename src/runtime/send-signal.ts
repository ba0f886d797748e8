/**
 * `baton.signal(runId, name, payload)` (and `baton signal`, `POST /runs/:id/signals/:name`): stores
 * the signal for the run until a `ctx.waitFor(name)` reads it. A run waiting for it is woken: a
 * `run-wake` timer row written with the signal makes that survive a crash, and the same check runs
 * at once in this process.
 */
import { assertJsonDepth, BatonError, newEvent, newId, ValidationError } from '../core/index.ts';
import { SIGNAL_NAME, SIGNAL_NAME_EXPECTED } from './durable-calls.ts';
import type { Engine } from './engine.ts';
import { MAX_INPUT_BYTES } from './start-run.ts';
import { WAKE_TIMER, wakeIfReady } from './wake-run.ts';

/** A signal as baton.signal stored it, until the run reads it with ctx.waitFor. */
export interface SentSignal {
  signalId: string;
  runId: string;
  name: string;
}

export async function sendSignal(
  engine: Engine,
  runId: string,
  name: string,
  payload: unknown = null,
): Promise<SentSignal> {
  if (typeof name !== 'string' || !SIGNAL_NAME.test(name))
    throw new ValidationError('signal name', SIGNAL_NAME_EXPECTED, name);
  assertJsonDepth(payload, 'payload');
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `payload is not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (text === undefined) throw new ValidationError('payload', 'a JSON value', payload);
  if (text.length > MAX_INPUT_BYTES)
    throw new BatonError(
      'INVALID_INPUT',
      `payload is ${(text.length / 1_048_576).toFixed(1)} MB, above the ${MAX_INPUT_BYTES / 1_048_576} MB limit`,
    );
  const now = engine.clock.now();
  const signalId = newId('sig', now);
  await engine.store.addSignal(
    { id: signalId, runId, name, payload: JSON.parse(text) },
    [newEvent(runId, 'signal:received', { name, signalId })],
    {
      timers: [
        { id: `signal:${signalId}`, runId, kind: WAKE_TIMER, dueAt: now, payload: { runId }, createdAt: now },
      ],
    },
  );
  await wakeIfReady(engine, runId);
  return { signalId, runId, name };
}
