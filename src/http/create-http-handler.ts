/**
 * The HTTP API as one standard fetch handler, `(request: Request) => Promise<Response>`, built on
 * Hono so it mounts unchanged in Node (`serveHttp`), serverless functions and edge runtimes.
 */
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { routePath } from 'hono/route';
import type { Baton } from '../runtime/index.ts';
import { limitBody, requireToken } from './auth-and-limits.ts';
import { bulkRoute } from './bulk-routes.ts';
import { mountDashboard } from './dashboard-routes.ts';
import { allEventsRoute, eventsRoute } from './event-stream.ts';
import { type HttpOptions, resolveHttpOptions } from './http-options.ts';
import { decisionsRoute, deliveriesRoute } from './inbox-routes.ts';
import { healthRoute, metricsRoute } from './ops-routes.ts';
import { overviewRoute } from './overview-route.ts';
import { cancelRoute, decideRoute, decisionAnswer, getRoute, listRoute, signalRoute } from './read-routes.ts';
import { jsonBodiesOnly, requestGuard } from './request-guard.ts';
import {
  AllEventsQuery,
  BulkBody,
  CancelBody,
  DeliveriesQuery,
  EventsQuery,
  ListQuery,
  ModeQuery,
  PageQuery,
  ResumeBody,
  StartBody,
  TimelineQuery,
} from './request-schemas.ts';
import { jsonBody, query } from './request-validators.ts';
import { type BatonMetrics, createBatonMetrics } from './run-metrics.ts';
import { flatTaskBody, type RouteContext, resumeRoute, startRoute, taskRoute } from './run-routes.ts';
import { timelineRoute } from './timeline-route.ts';
import { errorResponse, HttpCodes, HttpProblem } from './wire-errors.ts';

export interface HttpHandler {
  (request: Request): Promise<Response>;
  /** The Hono app, to mount under another app (`parent.route('/baton', handler.app)`). */
  readonly app: Hono;
  readonly metrics: BatonMetrics;
  /** Stops recording the store's events into the metrics. */
  close(): void;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function createHttpHandler(baton: Baton, options: HttpOptions = {}): HttpHandler {
  const resolved = resolveHttpOptions(options);
  const clock = options.clock ?? baton.clock;
  const metrics = options.metrics ?? createBatonMetrics(clock);
  metrics.collectFrom(baton.store);
  const unsubscribe = baton.store.onEvents((events) => metrics.observe(events));
  const rc: RouteContext = { baton, clock, options: resolved, metrics };
  const app = resolved.basePath === '' ? new Hono() : new Hono().basePath(resolved.basePath);
  const healthPath = `${resolved.basePath}/health`;

  app.use('*', async (c, next) => {
    await next();
    const route = routePath(c, -1);
    metrics.httpRequests.inc({
      method: c.req.method,
      route: route.endsWith('*') ? 'unmatched' : route,
      status: String(c.res.status),
    });
  });
  // Before authentication: a rebinding page or a foreign origin is refused whatever it sends.
  app.use(
    '*',
    requestGuard({ allowedHosts: resolved.allowedHosts, allowedOrigins: resolved.allowedOrigins }),
  );
  const dashboardPath = `${resolved.basePath}/dashboard`;
  // The dashboard's shell and bundle hold no data (the page sends the token with its API calls).
  const open = (path: string) =>
    path === healthPath ||
    (resolved.dashboard && (path === dashboardPath || path.startsWith(`${dashboardPath}/`)));
  const auth = resolved.token === undefined ? undefined : requireToken(resolved.token);
  app.use('*', async (c, next) => (auth && !open(c.req.path) ? auth(c, next) : next()));
  app.use('*', async (c, next) => {
    if (resolved.readOnly && !SAFE_METHODS.has(c.req.method))
      throw new HttpProblem(
        403,
        HttpCodes.readOnly,
        `this server is read-only: ${c.req.method} ${c.req.path} is refused`,
      );
    await next();
  });
  app.use('*', jsonBodiesOnly());
  app.use('*', limitBody(resolved.bodyLimitBytes));
  // Hono's middleware refuses with an HTTPException carrying our error response.
  app.onError((err) => (err instanceof HTTPException ? err.getResponse() : errorResponse(err)));
  app.notFound((c) =>
    errorResponse(new HttpProblem(404, HttpCodes.routeNotFound, `no route ${c.req.method} ${c.req.path}`)),
  );

  // Bodies and queries are checked on Hono's validator before the handler (request-validators.ts).
  app.post('/runs', jsonBody(StartBody), (c) => startRoute(rc, c.req.raw, c.req.valid('json')));
  app.post('/tasks/:name', jsonBody(flatTaskBody, {}), (c) =>
    taskRoute(rc, c.req.raw, c.req.param('name'), c.req.valid('json')),
  );
  app.post('/bulk/cancel', jsonBody(BulkBody), (c) => bulkRoute(rc, c.req.valid('json'), 'cancel'));
  app.post('/bulk/resume', jsonBody(BulkBody), (c) => bulkRoute(rc, c.req.valid('json'), 'resume'));
  app.get('/decisions', query(PageQuery), (c) => decisionsRoute(rc, c.req.valid('query')));
  app.get('/deliveries', query(DeliveriesQuery), (c) => deliveriesRoute(rc, c.req.valid('query')));
  app.get('/overview', () => overviewRoute(rc));
  app.get('/events', query(AllEventsQuery), (c) => allEventsRoute(rc, c, c.req.valid('query')));
  app.get('/runs/:id/timeline', query(TimelineQuery), (c) =>
    timelineRoute(rc, c.req.param('id'), c.req.valid('query')),
  );
  app.get('/runs', query(ListQuery), (c) => listRoute(rc, c.req.valid('query')));
  app.get('/runs/:id', (c) => getRoute(rc, c.req.param('id')));
  app.post('/runs/:id/resume', query(ModeQuery), jsonBody(ResumeBody, {}), (c) =>
    resumeRoute(rc, c.req.raw, c.req.param('id'), c.req.valid('query'), c.req.valid('json')),
  );
  app.get('/runs/:id/events', query(EventsQuery), (c) =>
    eventsRoute(rc, c, c.req.param('id'), c.req.valid('query')),
  );
  app.post('/runs/:id/decisions', jsonBody(decisionAnswer), (c) =>
    decideRoute(rc, c.req.param('id'), c.req.valid('json')),
  );
  app.post('/runs/:id/cancel', jsonBody(CancelBody, {}), (c) =>
    cancelRoute(rc, c.req.param('id'), c.req.valid('json')),
  );
  // The body is the payload, any JSON (empty: null).
  app.post(
    '/runs/:id/signals/:name',
    jsonBody((payload) => payload),
    (c) => signalRoute(rc, c.req.param('id'), c.req.param('name'), c.req.valid('json')),
  );
  app.get('/health', () => healthRoute(rc));
  if (resolved.dashboard) mountDashboard(app, resolved);
  app.get('/metrics', () => metricsRoute(rc));

  const handler = (request: Request) => Promise.resolve(app.fetch(request));
  return Object.assign(handler, {
    app: app as unknown as Hono,
    metrics,
    close: unsubscribe,
  });
}
