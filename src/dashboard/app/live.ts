/**
 * The live connection: `GET /events` (every run's events) read with fetch, so the bearer token
 * goes in a header (EventSource cannot send one). Pages subscribe and refresh what an event touches;
 * a dropped connection reconnects from the last event id.
 */
// The parser file itself, not client/index.ts: the door pulls in zod (450 kB) through core.
import { SseParser } from '../../client/sse-parser.ts';
import type { BatonEvent } from '../../core/index.ts';
import { authHeaders } from './api.ts';
import { apiBase, liveState } from './state.ts';

type Listener = (events: BatonEvent[]) => void;
const listeners = new Set<Listener>();

export function onLiveEvents(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

let started = false;

export function startLive(): void {
  if (started) return;
  started = true;
  let lastId: number | undefined;
  const connect = async (): Promise<void> => {
    liveState.value = 'connecting';
    try {
      const response = await fetch(`${apiBase}/events`, {
        headers: {
          ...authHeaders(),
          accept: 'text/event-stream',
          ...(lastId !== undefined ? { 'last-event-id': String(lastId) } : {}),
        },
      });
      if (!response.ok || !response.body) throw new Error(`events: HTTP ${response.status}`);
      liveState.value = 'live';
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const batch: BatonEvent[] = [];
        for (const m of parser.feed(decoder.decode(value, { stream: true }))) {
          if (m.event === 'error') continue;
          const event = JSON.parse(m.data) as BatonEvent;
          lastId = event.id;
          batch.push(event);
        }
        if (batch.length) for (const l of listeners) l(batch);
      }
    } catch {
      // Reconnect below.
    }
    liveState.value = 'offline';
    setTimeout(() => void connect(), 2000);
  };
  void connect();
}
