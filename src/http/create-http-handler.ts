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
import { cancelRoute, decideRoute, getRoute, listRoute, signalRoute } from './read-routes.ts';
import { jsonBodiesOnly, requestGuard } from './request-guard.ts';
import { type BatonMetrics, createBatonMetrics } from './run-metrics.ts';
import { type RouteContext, resumeRoute, startRoute, taskRoute } from './run-routes.ts';
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

  app.post('/runs', (c) => startRoute(rc, c.req.raw));
  app.post('/tasks/:name', (c) => taskRoute(rc, c.req.raw, c.req.param('name')));
  app.post('/bulk/cancel', (c) => bulkRoute(rc, c.req.raw, 'cancel'));
  app.post('/bulk/resume', (c) => bulkRoute(rc, c.req.raw, 'resume'));
  app.get('/decisions', (c) => decisionsRoute(rc, c.req.raw));
  app.get('/deliveries', (c) => deliveriesRoute(rc, c.req.raw));
  app.get('/overview', () => overviewRoute(rc));
  app.get('/events', (c) => allEventsRoute(rc, c));
  app.get('/runs/:id/timeline', (c) => timelineRoute(rc, c.req.raw, c.req.param('id')));
  app.get('/runs', (c) => listRoute(rc, c.req.raw));
  app.get('/runs/:id', (c) => getRoute(rc, c.req.param('id')));
  app.post('/runs/:id/resume', (c) => resumeRoute(rc, c.req.raw, c.req.param('id')));
  app.get('/runs/:id/events', (c) => eventsRoute(rc, c, c.req.param('id')));
  app.post('/runs/:id/decisions', (c) => decideRoute(rc, c.req.raw, c.req.param('id')));
  app.post('/runs/:id/cancel', (c) => cancelRoute(rc, c.req.raw, c.req.param('id')));
  app.post('/runs/:id/signals/:name', (c) =>
    signalRoute(rc, c.req.raw, c.req.param('id'), c.req.param('name')),
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
