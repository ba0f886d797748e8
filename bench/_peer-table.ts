/**
 * The "Baton beside the best peer" table of the bench harness. bench/peers.ts reports
 * `peers.<figure>.<system>`; each `peers.<figure>.baton` is set beside the best other system's
 * value for that figure (plus the cross-module peers below), with the ratio. Higher is better for
 * rates (`_per_s`), lower for everything else. The target is always "ahead of every peer".
 */
import { formatTable } from './_table.ts';

/** Peer figures measured by other modules for the same job. */
const OTHER_PEERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // LangGraph's SQLite checkpointer per superstep (bench/langgraph.ts), same SQLite, no fsync.
  step_ms: { langgraph_sqlite: 'langgraph.sqlite_saver_step_ms' },
};

export interface PeerRow {
  figure: string;
  baton: number;
  peer: string;
  peerValue: number;
  /** How many times better Baton is (> 1: ahead; < 1: behind). */
  advantage: number;
}

/** Rates of work done are better higher; queries an idle process sends per second are a cost. */
export function higherIsBetter(figure: string): boolean {
  return figure.endsWith('_per_s') && !figure.includes('queries');
}

export function peerRows(values: ReadonlyMap<string, number>): PeerRow[] {
  const rows: PeerRow[] = [];
  for (const [name, baton] of values) {
    const m = /^peers\.(.+)\.baton$/.exec(name);
    if (!m) continue;
    const figure = m[1] as string;
    const candidates: Array<[string, number]> = [];
    for (const [other, v] of values) {
      const o = /^peers\.(.+)\.([^.]+)$/.exec(other);
      if (o && o[1] === figure && o[2] !== 'baton') candidates.push([o[2] as string, v]);
    }
    for (const [peer, metric] of Object.entries(OTHER_PEERS[figure] ?? {})) {
      const v = values.get(metric);
      if (v !== undefined) candidates.push([peer, v]);
    }
    if (candidates.length === 0) continue;
    const up = higherIsBetter(figure);
    const [peer, peerValue] = candidates.reduce((best, c) =>
      (up ? c[1] > best[1] : c[1] < best[1]) ? c : best,
    );
    // A zero (e.g. p50 lateness of 0 ms) makes the ratio meaningless: call it even.
    const advantage = up ? baton / peerValue : baton === 0 ? Number.POSITIVE_INFINITY : peerValue / baton;
    rows.push({ figure, baton, peer, peerValue, advantage: Number.isNaN(advantage) ? 1 : advantage });
  }
  return rows;
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return '∞';
  if (Math.abs(n) >= 1_000) return Math.round(n).toLocaleString('en-US');
  return Number(n.toPrecision(3)).toString();
}

function cells(row: PeerRow | undefined): string[] {
  if (!row) return ['', '', '', ''];
  return [
    fmt(row.baton),
    `${row.peer} ${fmt(row.peerValue)}`,
    `${fmt(row.advantage)}x`,
    row.advantage >= 1 ? 'AHEAD' : 'BEHIND',
  ];
}

/** Quiet rows and, when the harness measured them, the same figures with one core busy. */
export function formatPeerTable(quiet: readonly PeerRow[], busy: readonly PeerRow[]): string {
  const header = ['figure', 'baton', 'best peer', 'baton ahead by', 'status'];
  const withBusy = busy.length > 0;
  const busyHeader = ['busy: baton', 'best peer', 'ahead by', 'status'];
  const rows = quiet.map((q) => {
    const base = [q.figure, ...cells(q)];
    return withBusy ? [...base, ...cells(busy.find((b) => b.figure === q.figure))] : base;
  });
  return formatTable(withBusy ? [...header, ...busyHeader] : header, rows);
}
