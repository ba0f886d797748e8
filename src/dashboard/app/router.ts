/**
 * Page URLs under the dashboard's root: "/" overview, "/runs" (filters in the query), "/runs/<id>",
 * "/decisions", "/deliveries". Links are real hrefs (shareable, open in a new tab); plain clicks
 * navigate without reloading.
 */
import { signal } from '@preact/signals';
import { config } from './state.ts';

export interface Route {
  page: 'overview' | 'runs' | 'run' | 'decisions' | 'deliveries' | 'missing';
  id?: string;
  params: URLSearchParams;
}

function parse(): Route {
  const path = location.pathname.startsWith(config.root) ? location.pathname.slice(config.root.length) : '/';
  const params = new URLSearchParams(location.search);
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) return { page: 'overview', params };
  if (parts[0] === 'runs' && parts.length === 1) return { page: 'runs', params };
  if (parts[0] === 'runs' && parts.length === 2)
    return { page: 'run', id: decodeURIComponent(parts[1] ?? ''), params };
  if (parts[0] === 'decisions' && parts.length === 1) return { page: 'decisions', params };
  if (parts[0] === 'deliveries' && parts.length === 1) return { page: 'deliveries', params };
  return { page: 'missing', params };
}

export const route = signal<Route>(parse());

export function href(path: string, params?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v) q.set(k, v);
  const s = q.toString();
  return `${config.root}${path}${s ? `?${s}` : ''}`;
}

export function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  route.value = parse();
  if (!replace) window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  route.value = parse();
});

/** Follows same-dashboard links without a reload (modifier clicks keep the browser's behaviour). */
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(config.root)) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
