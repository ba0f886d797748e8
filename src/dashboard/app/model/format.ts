/** Durations, countdowns and instants as the dashboard prints them. Pure. */

/** "1 h 02 min", "4 min 03 s", "12.5 s", "850 ms". */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  const sign = ms < 0 ? '−' : '';
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${+(abs / 1000).toFixed(1)} s`;
  const s = Math.floor(abs / 1000);
  if (abs < 3_600_000) return `${sign}${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  const m = Math.floor(s / 60);
  if (abs < 86_400_000) return `${sign}${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
  return `${sign}${Math.floor(m / 1440)} d ${Math.floor((m % 1440) / 60)} h`;
}

/** A countdown to `at`: "in 4 min 03 s", "now", or "12 s ago". Whole seconds, floored toward the due time. */
export function countdown(at: number, now: number): string {
  const ms = at - now;
  if (Math.abs(ms) < 1000) return 'now';
  const rounded = Math.floor(Math.abs(ms) / 1000) * 1000;
  return ms > 0 ? `in ${formatDuration(rounded)}` : `${formatDuration(rounded)} ago`;
}

/** "2026-11-26 09:00:00 Asia/Shanghai" (the user's zone) — Intl, so any IANA zone works. */
export function formatInZone(at: number, timeZone: string): string {
  try {
    const parts = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(at));
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')} ${timeZone}`;
  } catch {
    return new Date(at).toISOString();
  }
}

export function formatUtc(at: number): string {
  return `${new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} UTC`;
}

/** A change between two JSON values, by path. */
export interface Change {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What changed from one checkpoint state to the next (objects by key, everything else by value). */
export function diffJson(before: unknown, after: unknown, path = '$', out: Change[] = []): Change[] {
  if (isObject(before) && isObject(after)) {
    for (const k of Object.keys(before))
      if (!(k in after)) out.push({ path: `${path}.${k}`, kind: 'removed', before: before[k] });
    for (const k of Object.keys(after)) {
      if (!(k in before)) out.push({ path: `${path}.${k}`, kind: 'added', after: after[k] });
      else diffJson(before[k], after[k], `${path}.${k}`, out);
    }
    return out;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ path, kind: 'changed', before, after });
  return out;
}
