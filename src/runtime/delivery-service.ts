/**
 * The moving parts of scheduled delivery: the due-time timer (deliver a held result, or send the
 * in-progress notice) and the dispatcher that hands queued deliveries to callbacks and webhooks,
 * retrying webhooks with backoff through the durable delivery queue.
 */
import { isBatonError, isTerminal, newEvent, serializeError } from '../core/index.ts';
import { sendWebhook, type WebhookTarget, webhookRetryDelay } from '../delivery/index.ts';
import type { DeliveryRecord } from '../store/index.ts';
import type { Engine } from './engine.ts';
import { ttlOf } from './finish-attempt.ts';
import { progressDelivery, resultDelivery, scheduleOf } from './scheduled-delivery.ts';

/** A delivery as a callback receives it: the protocol payload and its idempotency key. */
export interface Delivered {
  runId: string;
  kind: 'tool_result' | 'tool_choice';
  idempotencyKey: string;
  payload: Record<string, unknown>;
  attempt: number;
}

export interface DeliveryHandlers {
  callback?: (delivery: Delivered) => void | Promise<void>;
  webhooks: Record<string, WebhookTarget>;
}

/** The due-time timer of a scheduled run. */
export async function onDeliveryDue(engine: Engine, runId: string): Promise<void> {
  const run = await engine.store.getRun(runId);
  if (!run || !scheduleOf(run) || isTerminal(run.status)) return;
  const now = engine.clock.now();
  try {
    if (run.status === 'waiting' && run.waitReason === 'delivery') {
      const d = resultDelivery(
        run,
        { status: 'succeeded', output: run.output },
        now,
        engine.delivery.channels,
        engine.logger,
      );
      await engine.store.transition(
        run.id,
        {
          status: 'succeeded',
          waitReason: null,
          wakeAt: null,
          finishedAt: now,
          expiresAt: now + ttlOf(engine, run, engine.tasks.get(run.name)),
        },
        [
          ...d.events,
          newEvent(run.id, 'run:succeeded', { durationMs: now - (run.startedAt ?? run.createdAt) }),
        ],
        { expectStatus: ['waiting'] },
        d.effects,
      );
      return;
    }
    if (run.meta.progressSentAt !== undefined) return;
    const p = await progressDelivery(
      run,
      now,
      engine.delivery.channels,
      engine.delivery.progress,
      engine.logger,
    );
    // No status change: the run goes on; only the notice and its deliveries are written.
    await engine.store.transition(
      run.id,
      { meta: { progressSentAt: now } },
      p.events,
      { expectStatus: [run.status] },
      p.effects,
    );
  } catch (err) {
    // The run moved on meanwhile (finished, retried): the attempt that moved it delivered what was due.
    if (!isBatonError(err, 'RUN_CONFLICT')) throw err;
  }
}

/** A delivery being sent is hidden this long; longer than any send may take, so it is never sent twice at once. */
const VISIBILITY_MS = 120_000;

/** Hands due deliveries to their channels; webhooks that fail are retried with backoff. */
export async function dispatchDeliveries(engine: Engine, handlers: DeliveryHandlers): Promise<number> {
  const due = await engine.store.takeDueDeliveries(50, VISIBILITY_MS);
  await Promise.all(due.map((d) => dispatchOne(engine, handlers, d)));
  return due.length;
}

async function dispatchOne(engine: Engine, handlers: DeliveryHandlers, d: DeliveryRecord): Promise<void> {
  const now = engine.clock.now();
  let outcome: { ok: true } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };
  let retry: Parameters<typeof webhookRetryDelay>[1] = {};
  if (d.channel === 'callback') {
    try {
      await handlers.callback?.({
        runId: d.runId,
        kind: d.kind,
        idempotencyKey: d.idempotencyKey,
        payload: d.payload,
        attempt: d.attempts,
      });
      outcome = { ok: true };
    } catch (err) {
      outcome = { ok: false, retryable: true, error: serializeError(err).message };
    }
  } else {
    const name = String(d.target.name ?? d.channel.replace(/^webhook:/, ''));
    const target = handlers.webhooks[name];
    if (!target) outcome = { ok: false, retryable: false, error: `no webhook named "${name}" is configured` };
    else {
      retry = target.retry;
      const sent = await sendWebhook({
        url: target.url,
        ...(target.secret !== undefined ? { secret: target.secret } : {}),
        headers: target.headers,
        timeoutMs: Math.min(target.timeoutMs, VISIBILITY_MS / 2),
        body: d.payload,
        idempotencyKey: d.idempotencyKey,
        deliveryId: d.id,
        nowMs: now,
        clock: engine.clock,
      });
      outcome = sent.ok
        ? { ok: true }
        : {
            ok: false,
            retryable: sent.retryable,
            error: `${sent.reason}${sent.status ? ` ${sent.status}` : ''}: ${sent.error}`,
            ...(sent.retryAfterMs !== undefined ? { retryAfterMs: sent.retryAfterMs } : {}),
          };
    }
  }
  if (outcome.ok) {
    await engine.store.settleDelivery(d.id, { status: 'delivered' });
    await engine.store
      .appendEvents([
        newEvent(d.runId, 'delivery:sent', {
          channel: d.channel,
          kind: d.kind,
          attempts: d.attempts,
          idempotencyKey: d.idempotencyKey,
        }),
      ])
      .catch(() => undefined);
    return;
  }
  const wait = outcome.retryable
    ? webhookRetryDelay(d.attempts, {
        ...retry,
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
      })
    : undefined;
  await engine.store.settleDelivery(
    d.id,
    wait === undefined
      ? { status: 'failed', error: outcome.error }
      : { status: 'retry', error: outcome.error, retryAt: now + wait },
  );
  engine.logger.warn(
    { delivery: d.id, channel: d.channel, attempts: d.attempts, error: outcome.error },
    'delivery failed',
  );
  await engine.store
    .appendEvents([
      newEvent(d.runId, 'delivery:failed', {
        channel: d.channel,
        kind: d.kind,
        attempts: d.attempts,
        error: outcome.error,
        final: wait === undefined,
      }),
    ])
    .catch(() => undefined);
}
