/**
 * Wake-ups across processes through LISTEN/NOTIFY — hints, never the truth. Polling stays the
 * truth; a hint only makes a process look now instead of at its next (slow, safety) poll.
 *
 * Sending: after a commit that made work claimable or wrote timers/deliveries/decisions ('work'),
 * or appended events ('events'), the store asks for a notification. Requests are coalesced per
 * channel: at most one NOTIFY in flight, at most one per `minIntervalMs`, the rest folded into a
 * single trailing one. A NOTIFY carries no payload, and it is sent in its own tiny transaction after
 * the data commit, never inside it: NOTIFY takes a database-wide lock at COMMIT, and holding that
 * in the writers' transactions serializes every writer (peers have had outages from it). A channel
 * free at the moment a write batch commits rides in that COMMIT's message (`forCommit`), as the
 * next statement after it: the hint costs no round trip of its own and reaches listeners the
 * moment the data is visible. Its transaction commits asynchronously (synchronous_commit off): a
 * hint need not survive a crash, and waiting for its WAL flush only delays it.
 *
 * Listening: one connection per store outside the pool (a pooled connection would be handed to
 * others and lose its LISTEN), opened when the first listener subscribes. When it is lost it is
 * reopened with backoff, LISTENs again, and then every listener is woken once so it does a full
 * sweep for what it missed. No error of this connection ever ends the process. In 'poll' mode
 * (connection poolers in transaction mode, serverless) nothing listens and processes poll.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Clock, TimerHandle } from '../../time/index.ts';
import type { WakeChannel } from '../store.ts';
import { literal } from './batch-conn.ts';
import { HINT_MARK } from './commit-message.ts';

export type WakeupMode = 'listen' | 'poll';

const CHANNELS: readonly WakeChannel[] = ['work', 'events'];
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

export interface WakeupOptions {
  mode: WakeupMode;
  /** Settings for the listening connection (the pool's own). */
  connection: pg.ClientConfig;
  /** Sends notifications (one short query each). */
  pool: pg.Pool;
  schema: string;
  clock: Clock;
  /** At most one NOTIFY per channel this often. @default 5 */
  minIntervalMs?: number;
}

/** Channel names for a schema: lowercase, short, the same in every process. */
export function channelNames(schema: string): Record<WakeChannel, string> {
  const h = createHash('sha256').update(schema).digest('hex').slice(0, 16);
  return { work: `baton_work_${h}`, events: `baton_events_${h}` };
}

/**
 * Notifications to send right after a commit, in its message: `sql` goes after the COMMIT (it
 * answers with at least one row once the COMMIT has succeeded); `settle` once the message answered.
 */
export interface CommitHint {
  sql: string;
  channels: readonly WakeChannel[];
  settle(sent: boolean): void;
}

/**
 * Hints on `names`, one implicit transaction that commits without waiting for its WAL flush. The
 * first statement answers a row before anything can fail (set_config is local to the transaction);
 * its column is HINT_MARK, so that a message carrying statements before the COMMIT can tell it apart.
 */
function notifySql(names: readonly string[]): string {
  return `SELECT set_config('synchronous_commit', 'off', true) AS ${HINT_MARK};\nSELECT ${names
    .map((n) => `pg_notify(${literal(n)}, '')`)
    .join(', ')}`;
}

interface SendState {
  last: number;
  inflight: boolean;
  pending: boolean;
  timer: TimerHandle | undefined;
}

export class PgWakeups {
  private readonly names: Record<WakeChannel, string>;
  private readonly byName: Map<string, WakeChannel>;
  private readonly listeners = new Set<(channel: WakeChannel) => void>();
  private readonly send = new Map<WakeChannel, SendState>();
  private readonly minIntervalMs: number;
  private client: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private backoff = MIN_BACKOFF_MS;
  private reconnectTimer: TimerHandle | undefined;
  /** Notifications sent and received, for figures and tests. */
  readonly stats = { sent: 0, received: 0, reconnects: 0 };

  constructor(private readonly options: WakeupOptions) {
    this.names = channelNames(options.schema);
    this.byName = new Map(CHANNELS.map((c) => [this.names[c], c]));
    this.minIntervalMs = options.minIntervalMs ?? 5;
  }

  /** True while a LISTEN connection is up: hints arrive, and polling may be slow. */
  get live(): boolean {
    return this.listening;
  }

  /** True when this store should be listening: LISTEN mode and someone subscribed. */
  get wanted(): boolean {
    return this.options.mode === 'listen' && this.listeners.size > 0 && !this.closed;
  }

  subscribe(listener: (channel: WakeChannel) => void): () => void {
    this.listeners.add(listener);
    if (this.options.mode === 'listen' && !this.client && !this.closed) void this.connect();
    return () => this.listeners.delete(listener);
  }

  private state(channel: WakeChannel): SendState {
    let s = this.send.get(channel);
    if (!s) {
      s = { last: Number.NEGATIVE_INFINITY, inflight: false, pending: false, timer: undefined };
      this.send.set(channel, s);
    }
    return s;
  }

  /**
   * The channels among `channels` that may be notified now (none in flight, none sent in the last
   * `minIntervalMs`, no trailing one waiting), taken to ride in a commit's message; undefined when
   * none is free. Call `notify` after the commit for the others, as for any commit.
   */
  forCommit(channels: readonly WakeChannel[]): CommitHint | undefined {
    if (this.closed) return undefined;
    const now = this.options.clock.monotonic();
    const taken = channels.filter((c) => {
      const s = this.state(c);
      return !s.pending && !s.inflight && s.last + this.minIntervalMs <= now;
    });
    if (taken.length === 0) return undefined;
    for (const c of taken) {
      const s = this.state(c);
      s.inflight = true;
      s.last = now;
    }
    let settled = false;
    return {
      sql: notifySql(taken.map((c) => this.names[c])),
      channels: taken,
      settle: (sent) => {
        if (settled) return;
        settled = true;
        for (const c of taken) {
          if (sent) this.stats.sent++;
          this.sent(c, this.state(c));
        }
      },
    };
  }

  /** Asks for a notification on a channel (coalesced, rate-limited). */
  notify(channel: WakeChannel): void {
    if (this.closed) return;
    const s = this.state(channel);
    if (s.pending) return;
    const wait = s.last + this.minIntervalMs - this.options.clock.monotonic();
    if (s.inflight || wait > 0) {
      s.pending = true;
      if (!s.inflight && !s.timer) {
        const state = s;
        s.timer = this.options.clock.setTimer(wait, () => {
          state.timer = undefined;
          this.flushPending(channel, state);
        });
      }
      return;
    }
    this.sendNow(channel, s);
  }

  private flushPending(channel: WakeChannel, s: SendState): void {
    if (!s.pending || s.inflight || this.closed) return;
    s.pending = false;
    this.notify(channel);
  }

  private sendNow(channel: WakeChannel, s: SendState): void {
    s.inflight = true;
    s.last = this.options.clock.monotonic();
    this.options.pool
      .query(notifySql([this.names[channel]]))
      .then(
        () => {
          this.stats.sent++;
        },
        // A hint that cannot be sent is lost; the others' polls still find the work.
        () => {},
      )
      .finally(() => this.sent(channel, s));
  }

  /** A notification is no longer in flight: the trailing one, if asked for meanwhile, follows. */
  private sent(channel: WakeChannel, s: SendState): void {
    s.inflight = false;
    if (s.pending && !s.timer && !this.closed) {
      const wait = s.last + this.minIntervalMs - this.options.clock.monotonic();
      if (wait <= 0) this.flushPending(channel, s);
      else
        s.timer = this.options.clock.setTimer(wait, () => {
          s.timer = undefined;
          this.flushPending(channel, s);
        });
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    // Named so operators (and tests) can tell it from the pool's connections in pg_stat_activity.
    const client = new pg.Client({ application_name: 'baton-listen', ...this.options.connection });
    this.client = client;
    // Registered before connecting: an error event without a listener would end the process.
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => {
      const channel = this.byName.get(msg.channel);
      if (!channel) return;
      this.stats.received++;
      this.emit(channel);
    });
    try {
      await client.connect();
      for (const c of CHANNELS) await client.query(`LISTEN ${pg.escapeIdentifier(this.names[c])}`);
      if (this.client !== client || this.closed) return;
      const wasReconnect = this.stats.reconnects > 0 || this.backoff > MIN_BACKOFF_MS;
      this.listening = true;
      this.backoff = MIN_BACKOFF_MS;
      // Whatever was notified while no one listened is lost: look at everything once.
      if (wasReconnect) for (const c of CHANNELS) this.emit(c);
    } catch {
      this.lost(client);
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    client.end().catch(() => {});
    if (this.closed) return;
    this.stats.reconnects++;
    const delay = this.backoff * (0.5 + Math.random() / 2);
    this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
    this.reconnectTimer = this.options.clock.setTimer(delay, () => {
      this.reconnectTimer = undefined;
      void this.connect();
    });
  }

  private emit(channel: WakeChannel): void {
    for (const l of this.listeners) {
      try {
        l(channel);
      } catch {
        // A listener's bug must not stop the others.
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    this.options.clock.clearTimer(this.reconnectTimer);
    for (const s of this.send.values()) this.options.clock.clearTimer(s.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
