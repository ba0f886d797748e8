/**
 * `GET /decisions`: every open question across all runs, with the partial findings beside it, when
 * the policy answers and with what. `GET /deliveries`: scheduled tool calls with their expression,
 * resolved instant and delivery state.
 */
import { type DeliveryEntry, decisionInbox, deliveryBoard, type InboxDecision } from '../runtime/index.ts';
import type { DeliveriesQuery, PageQuery } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { jsonResponse } from './wire-errors.ts';

export interface DecisionsPage {
  success: true;
  now: number;
  decisions: Array<InboxDecision & { findings: unknown[]; findingsTotal: number }>;
}

export interface DeliveriesPage {
  success: true;
  now: number;
  deliveries: DeliveryEntry[];
  /** `upcoming` only: delivered (or dropped) in the last ten minutes, newest first. */
  recent: DeliveryEntry[];
  nextCursor: string | null;
}

/** Findings shown beside a question (the rest are on the run page). */
const FINDINGS_SHOWN = 20;

export async function decisionsRoute(rc: RouteContext, query: PageQuery): Promise<Response> {
  const open = await decisionInbox(rc.baton.internals, query.limit ?? 200);
  const decisions = await Promise.all(
    open.map(async (d) => {
      const findings = (await rc.baton.store.listPartials(d.runId)).flatMap((p) => p.findings);
      return { ...d, findings: findings.slice(-FINDINGS_SHOWN), findingsTotal: findings.length };
    }),
  );
  const body: DecisionsPage = { success: true, now: rc.clock.now(), decisions };
  return jsonResponse(body);
}

export async function deliveriesRoute(rc: RouteContext, query: DeliveriesQuery): Promise<Response> {
  const board = await deliveryBoard(rc.baton.internals, {
    state: query.state ?? 'upcoming',
    limit: query.limit ?? 100,
    cursor: query.cursor,
  });
  const body: DeliveriesPage = { success: true, now: rc.clock.now(), ...board };
  return jsonResponse(body);
}
