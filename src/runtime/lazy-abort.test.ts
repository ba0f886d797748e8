import { describe, expect, it } from 'vitest';
import { LazyAbort } from './lazy-abort.ts';

describe('LazyAbort', () => {
  it('hands out a signal made after the abort already aborted, with the reason', () => {
    const a = new LazyAbort();
    const reason = new Error('deadline');
    a.abort(reason);
    expect(a.aborted).toBe(true);
    expect(a.signal.aborted).toBe(true);
    expect(a.signal.reason).toBe(reason);
  });

  it("runs the signal's listeners before the engine's, once, with the first reason", () => {
    const a = new LazyAbort();
    const order: string[] = [];
    a.signal.addEventListener('abort', () => order.push(`body:${String(a.signal.reason)}`));
    a.onAbort(() => order.push(`engine:${String(a.reason)}`));
    a.abort('first');
    a.abort('second');
    expect(order).toEqual(['body:first', 'engine:first']);
    expect(a.signal).toBe(a.signal);
  });

  it('gives an AbortError like AbortController when no reason is given', () => {
    const a = new LazyAbort();
    a.abort();
    expect(a.reason).toBeInstanceOf(DOMException);
    expect((a.reason as DOMException).name).toBe('AbortError');
    expect(a.signal.reason).toBe(a.reason);
  });

  it('does not call a listener taken off, and makes no signal unless asked', () => {
    const a = new LazyAbort();
    let called = 0;
    const fn = () => called++;
    a.onAbort(fn);
    a.offAbort(fn);
    a.abort(new Error('x'));
    expect(called).toBe(0);
    expect(Object.values(a).some((v) => v instanceof AbortController)).toBe(false);
  });
});
