import { describe, expect, it } from 'vitest';
import type { BatonEvent } from '../core/index.ts';
import { describeEvent } from './view-model.ts';

describe('describeEvent', () => {
  it('calls the first retry "retry 1" (issue 12 item 7)', () => {
    const e = {
      id: 1,
      runId: 'r',
      rootId: 'r',
      type: 'attempt:retrying',
      at: 0,
      data: { nextAttempt: 2, waitMs: 5_000, nextTimeoutMs: 180_000 },
    } as unknown as BatonEvent;
    expect(describeEvent(e)).toMatch(/^retry 1 \(attempt 2\) in 5/);
  });
});
