/** The page's shared state: its config, the token, the server's clock, the live connection. */
import { signal } from '@preact/signals';

export interface PageConfig {
  readOnly: boolean;
  auth: boolean;
  /** The dashboard's own path, e.g. "/api/dashboard"; the API is what precedes "/dashboard". */
  root: string;
}

function readConfig(): PageConfig {
  const meta = document.querySelector('meta[name="baton-dashboard"]')?.getAttribute('content');
  const parsed = meta ? (JSON.parse(meta) as Partial<PageConfig>) : {};
  return {
    readOnly: parsed.readOnly === true,
    auth: parsed.auth === true,
    root: parsed.root ?? '/dashboard',
  };
}

export const config = readConfig();
export const apiBase = config.root.replace(/\/dashboard$/, '');

const TOKEN_KEY = 'baton-token';

/** A token passed as `#token=…` (what `baton serve --dashboard` prints) is kept for this tab only. */
function initialToken(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match?.[1]) {
    const token = decodeURIComponent(match[1]);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(history.state, '', location.pathname + location.search);
    return token;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export const token = signal<string | null>(initialToken());
export function setToken(value: string | null): void {
  if (value === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, value);
  token.value = value;
}

/** Server time minus browser time, from the `now` of the last answer (the server's clock rules). */
let skew = 0;
export function observeServerNow(serverNow: number): void {
  skew = serverNow - Date.now();
}
export function serverNow(): number {
  return Date.now() + skew;
}

/** Ticks once a second so countdowns move; components read it to re-render. */
export const tick = signal(serverNow());
setInterval(() => {
  tick.value = serverNow();
}, 1000);

/** Whether the live stream is connected (shown in the header). */
export const liveState = signal<'connecting' | 'live' | 'offline'>('connecting');
