/**
 * Loads a page's data and keeps it fresh: again whenever a live event the page cares about arrives
 * (at most every 300 ms, so a burst of events is one request).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { BatonEvent } from '../../core/index.ts';
import { onLiveEvents } from './live.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  reload(): void;
}

export function useLoad<T>(
  load: () => Promise<T>,
  key: string,
  relevant: (events: BatonEvent[]) => boolean = () => true,
): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const seq = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;

  const reload = useCallback(() => {
    const mine = ++seq.current;
    loadRef.current().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(undefined);
      },
      (e: unknown) => {
        if (mine === seq.current) setError(e instanceof Error ? e : new Error(String(e)));
      },
    );
  }, []);

  useEffect(() => {
    setData(undefined);
    setError(undefined);
    reload();
    const off = onLiveEvents((events) => {
      if (!relevantRef.current(events) || timer.current) return;
      timer.current = setTimeout(() => {
        timer.current = undefined;
        reload();
      }, 300);
    });
    return () => {
      off();
      clearTimeout(timer.current);
      timer.current = undefined;
      seq.current++;
    };
  }, [key, reload]);

  return { data, error, reload };
}
