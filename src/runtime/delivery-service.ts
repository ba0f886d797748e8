/**
 * The moving parts of scheduled delivery: the due-time timer (deliver a held result, or send the
 * in-progress notice) and the dispatcher that hands queued deliveries to callbacks and webhooks,
 * retrying webhooks with backoff through the durable delivery queue.
 */
import { isBatonError, isTerminal, newEvent, serializeError } from '../core/index.ts';
import {
  DEFAULT_WEBHOOK_RETRY,
  sendWebhook,
  type WebhookRetryOptions,
  type WebhookTarget,
  webhookRetryDelay,
} from '../delivery/index.ts';
import type { DeliveryRecord } from '../store/index.ts';
import type { Engine } from './engine.ts';
import { ttlOf } from './finish-attempt.ts';
import { runMetaOf } from './run-meta.ts';
import { dueAtOnce, progressDelivery, resultDelivery, scheduleOf } from './scheduled-delivery.ts';

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
  /** A callback still running after this counts as failed (and is retried). */
  callbackTimeoutMs: number;
  webhooks: Record<string, WebhookTarget>;
}

/** The due-time timer of a scheduled run. */
export async function onDeliveryDue(engine: Engine, runId: string): Promise<'keep' | undefined> {
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
    // The result is not held yet: the run is still queued or running (or its attempt decided to hold
    // the result just before the due time and its write has not committed yet). The timer is kept
    // (it comes due again after the store's hold) so a result held after this read is still
    // released; deleting it here once left such a run waiting forever (found by the fleet test).
    // A due time already past when the tool was called means "at once": no notice ahead of the result.
    const schedule = scheduleOf(run);
    if (!schedule) return;
    if (runMetaOf(run).progressSentAt !== undefined || dueAtOnce(schedule)) return 'keep';
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
    return 'keep';
  } catch (err) {
    // The run moved on meanwhile (finished, held its result, retried): look again when the timer
    // comes back; by then it is finished (nothing to do) or holding its result (released then).
    if (!isBatonError(err, 'RUN_CONFLICT')) throw err;
    return 'keep';
  }
}

/** Time allowed past a send's own timeout before a taken delivery counts as abandoned. */
const SEND_MARGIN_MS = 1_000;

/**
 * How long a taken delivery stays hidden: the longest its send may take, plus the backoff its
 * channel would wait after that attempt failed. A sender that dies mid-send thus leaves it to be
 * retried when its own backoff says, not after a fixed window (issue 11 item 9).
 */
export function hideMs(handlers: DeliveryHandlers, route: string, attempt: number): number {
  const webhook = webhookOf(handlers, route);
  const sendMs = webhook ? webhook.timeoutMs : handlers.callbackTimeoutMs;
  const backoff = webhookRetryDelay(Math.max(1, attempt), webhook?.retry ?? {}) ?? 0;
  return sendMs + SEND_MARGIN_MS + backoff;
}

function webhookOf(handlers: DeliveryHandlers, route: string): WebhookTarget | undefined {
  if (!route.startsWith('webhook:')) return undefined;
  const [name] = route.slice('webhook:'.length).split(' ', 1);
  return handlers.webhooks[name ?? ''];
}

/** Hands due deliveries on this process's routes to their channels; failures are retried with backoff. */
export async function dispatchDeliveries(engine: Engine, handlers: DeliveryHandlers): Promise<number> {
  const due = await engine.store.takeDueDeliveries({
    limit: 50,
    routes: engine.delivery.routes,
    hideMs: (route, attempt) => hideMs(handlers, route, attempt),
  });
  await Promise.all(due.map((d) => dispatchOne(engine, handlers, d)));
  return due.length;
}

type SendOutcome = { ok: true } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

async function sendCallback(
  engine: Engine,
  handlers: DeliveryHandlers,
  d: DeliveryRecord,
): Promise<SendOutcome> {
  const callback = handlers.callback;
  // Never success without a handler; the route filter keeps such rows away, this is the backstop.
  if (!callback) return { ok: false, retryable: true, error: 'no onDelivery callback in this process' };
  let timer: ReturnType<Engine['clock']['setTimer']> | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(() =>
        callback({
          runId: d.runId,
          kind: d.kind,
          idempotencyKey: d.idempotencyKey,
          payload: d.payload,
          attempt: d.attempts,
        }),
      ),
      new Promise<never>((_, reject) => {
        timer = engine.clock.setTimer(handlers.callbackTimeoutMs, () =>
          reject(new Error(`onDelivery did not finish within ${handlers.callbackTimeoutMs} ms`)),
        );
      }),
    ]);
    return { ok: true };
  } catch (err) {
    return { ok: false, retryable: true, error: serializeError(err).message };
  } finally {
    engine.clock.clearTimer(timer);
  }
}

async function sendToWebhook(engine: Engine, target: WebhookTarget, d: DeliveryRecord): Promise<SendOutcome> {
  const sent = await sendWebhook({
    url: target.url,
    ...(target.secret !== undefined ? { secret: target.secret } : {}),
    headers: target.headers,
    allowPrivateNetwork: target.allowPrivateNetwork,
    timeoutMs: target.timeoutMs,
    body: d.payload,
    idempotencyKey: d.idempotencyKey,
    deliveryId: d.id,
    nowMs: engine.clock.now(),
    clock: engine.clock,
  });
  return sent.ok
    ? { ok: true }
    : {
        ok: false,
        retryable: sent.retryable,
        error: `${sent.reason}${sent.status ? ` ${sent.status}` : ''}: ${sent.error}`,
        ...(sent.retryAfterMs !== undefined ? { retryAfterMs: sent.retryAfterMs } : {}),
      };
}

async function dispatchOne(engine: Engine, handlers: DeliveryHandlers, d: DeliveryRecord): Promise<void> {
  const webhook = webhookOf(handlers, d.route);
  const retry: WebhookRetryOptions = webhook?.retry ?? {};
  const maxAttempts = retry.maxAttempts ?? DEFAULT_WEBHOOK_RETRY.maxAttempts;
  let outcome: SendOutcome;
  // A sender died during the last allowed attempt: its backoff says give up, so do not send again.
  if (d.attempts > maxAttempts)
    outcome = {
      ok: false,
      retryable: false,
      error: `gave up after ${maxAttempts} attempts (the last sender stopped mid-send)`,
    };
  else if (d.route.startsWith('callback:')) outcome = await sendCallback(engine, handlers, d);
  else if (!webhook)
    outcome = { ok: false, retryable: true, error: `no webhook for route "${d.route}" in this process` };
  else outcome = await sendToWebhook(engine, webhook, d);
  const now = engine.clock.now();
  if (outcome.ok) {
    await engine.store.settleDelivery(d.id, { status: 'delivered' }, [
      newEvent(d.runId, 'delivery:sent', {
        channel: d.channel,
        kind: d.kind,
        attempts: d.attempts,
        idempotencyKey: d.idempotencyKey,
      }),
    ]);
    return;
  }
  const wait = outcome.retryable
    ? webhookRetryDelay(Math.min(d.attempts, maxAttempts), {
        ...retry,
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
      })
    : undefined;
  engine.logger.warn(
    { delivery: d.id, channel: d.channel, attempts: d.attempts, error: outcome.error },
    'delivery failed',
  );
  await engine.store.settleDelivery(
    d.id,
    wait === undefined
      ? { status: 'failed', error: outcome.error }
      : { status: 'retry', error: outcome.error, retryAt: now + wait },
    [
      newEvent(d.runId, 'delivery:failed', {
        channel: d.channel,
        kind: d.kind,
        attempts: d.attempts,
        error: outcome.error,
        final: wait === undefined,
      }),
    ],
  );
}
