/**
 * Where a scheduled run's deliveries go, and which process may send them (issue 11 item 2).
 *
 * The targets are fixed when the run is created, from the creating process's configuration, and
 * stored with the run: whichever process later finishes the run writes one delivery row per stored
 * target, and each row names its route. A process sends only the routes it serves — its own
 * `onDelivery` callback (by name), the webhooks it configures (by name and URL) — and leaves the
 * rest pending for a process that can. So a `baton worker` without the app's callback never marks
 * the app's callback delivered, and a worker without the webhook's configuration never gives up on it.
 */
import { BatonError } from '../core/index.ts';
import type { WebhookTarget } from '../delivery/index.ts';

/** The name of a callback configured without one. */
export const DEFAULT_CALLBACK_NAME = 'default';

export interface DeliveryTargets {
  /** The name of the `onDelivery` callback that receives the run's deliveries; absent: none. */
  callback?: string;
  /** The webhooks the run's deliveries are posted to, with the URL each had when the run was created. */
  webhooks: Array<{ name: string; url: string }>;
}

/** The channel name (part of the idempotency key); the default callback keeps the plain "callback". */
export function callbackChannel(name: string): string {
  return name === DEFAULT_CALLBACK_NAME ? 'callback' : `callback:${name}`;
}

export function callbackRoute(name: string): string {
  return `callback:${name}`;
}

export function webhookRoute(name: string, url: string): string {
  return `webhook:${name} ${url}`;
}

/** The routes a process with this configuration can send. */
export function servedRoutes(
  callback: string | undefined,
  webhooks: Readonly<Record<string, WebhookTarget>>,
): string[] {
  const routes = callback === undefined ? [] : [callbackRoute(callback)];
  // `webhook:<name>`: rows written before routes carried the URL went by name only.
  for (const [name, t] of Object.entries(webhooks)) routes.push(webhookRoute(name, t.url), `webhook:${name}`);
  return routes;
}

export function checkCallbackName(name: unknown, field: string): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name))
    throw new BatonError(
      'INVALID_OPTION',
      `${field} must be 1-64 letters, digits, "_", "." or "-", got ${JSON.stringify(name)}`,
      { data: { field } },
    );
  return name;
}

/** Reads the targets stored with a run; undefined for runs stored before targets were. */
export function storedTargets(value: unknown): DeliveryTargets | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { callback?: unknown; webhooks?: unknown };
  const webhooks = Array.isArray(v.webhooks)
    ? v.webhooks.filter(
        (w): w is { name: string; url: string } =>
          typeof w === 'object' && w !== null && typeof w.name === 'string' && typeof w.url === 'string',
      )
    : [];
  return {
    ...(typeof v.callback === 'string' ? { callback: v.callback } : {}),
    webhooks: webhooks.map((w) => ({ name: w.name, url: w.url })),
  };
}
