/** The dashboard's only way to the server: the HTTP API, with the bearer token when one is set. */
import type {
  BulkAnswer,
  DecisionsPage,
  DeliveriesPage,
  Overview,
  RunFilter,
  RunPage,
  RunView,
  Timeline,
} from '../../client/index.ts';
import { apiBase, observeServerNow, token } from './state.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function authHeaders(): Record<string, string> {
  return token.value ? { authorization: `Bearer ${token.value}` } : {};
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${apiBase}${path}`, {
    method,
    headers: {
      ...authHeaders(),
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok)
    throw new ApiError(
      response.status,
      String(json.error ?? response.status),
      String(json.message ?? response.statusText),
      (json.details as Record<string, unknown>) ?? {},
    );
  if (typeof json.now === 'number') observeServerNow(json.now);
  return json as T;
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

const runPath = (id: string, rest = '') => `/runs/${encodeURIComponent(id)}${rest}`;

export const api = {
  overview: () => call<Overview>('GET', '/overview'),
  runs: (filter: RunFilter & { cursor?: string; limit?: number }) =>
    call<RunPage>('GET', `/runs${query(filter as Record<string, string | number | undefined>)}`),
  timeline: (id: string) => call<Timeline>('GET', runPath(id, '/timeline')),
  decisions: () => call<DecisionsPage>('GET', '/decisions'),
  deliveries: (state: 'upcoming' | 'all') => call<DeliveriesPage>('GET', `/deliveries${query({ state })}`),
  decide: (id: string, answer: { choice: string; mode?: string; input?: unknown }) =>
    call<{ run: RunView }>('POST', runPath(id, '/decisions'), answer),
  cancel: (id: string) => call<{ run: RunView }>('POST', runPath(id, '/cancel'), {}),
  resume: (id: string) => call<unknown>('POST', runPath(id, '/resume?mode=async'), {}),
  bulk: (action: 'cancel' | 'resume', target: { filter: RunFilter } | { ids: string[] }, dryRun: boolean) =>
    call<BulkAnswer>('POST', `/bulk/${action}`, { ...target, dryRun }),
};
