/**
 * RFC 9535 JSONPath Compliance Test Suite, every case through task_output resolution: the case's
 * document is a task's output and its selector the reference's `path`.
 *
 * How results map: a non-singular query resolves to the array of selected values, compared with
 * `result` (or any of `results`); a singular query resolves to its one value, so `[value]` is
 * compared, and a singular query that selects nothing is REF_NOT_FOUND (expected `[]`). An
 * invalid selector is REF_PATH_INVALID, resolved by the protocol's default: the full output.
 *
 * Leading zeros: our number-literal fix accepts `0.8`-style literals, which the suite does not
 * cover as valid cases; its leading-zero cases (`01`, `00` in filters, `01`/`-01` in indices and
 * slices) must still be rejected, and are, because they run here like every other case.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { conformancePath } from '../../test/conformance-path.ts';
import { ManualClock } from '../time/index.ts';
import { JsonPathEvaluator } from './jsonpath-query.ts';
import { createResolver } from './resolver.ts';

interface CtsCase {
  name: string;
  selector: string;
  document?: unknown;
  result?: unknown[];
  results?: unknown[][];
  invalid_selector?: boolean;
}

const ctsPath = conformancePath('jsonpath', 'cts.json');
const cases = (JSON.parse(readFileSync(ctsPath, 'utf8')) as { tests: CtsCase[] }).tests;

const current = { document: undefined as unknown };
const resolver = createResolver({
  clock: new ManualClock(),
  getTaskOutput: async () => ({ status: 'succeeded', output: current.document }),
});
// Tells the test which queries are singular; resolution itself decides the same way.
const probe = new JsonPathEvaluator();

describe('RFC 9535 compliance suite through task_output resolution', () => {
  it('has all 703 cases', () => {
    expect(cases).toHaveLength(703);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    current.document = c.invalid_selector ? { sentinel: 'full output' } : c.document;
    const r = await resolver.resolveReference({ ref_type: 'task_output', task_id: 'cts', path: c.selector });
    if (c.invalid_selector) {
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.failure.error_code).toBe('REF_PATH_INVALID');
      expect(r.failure.fallback_strategy).toBe('return_full_data');
      expect(r.value).toEqual({ sentinel: 'full output' });
      return;
    }
    const singular = probe.compile(c.selector).singularQuery();
    let nodes: unknown[];
    if (r.ok) nodes = singular ? [r.value] : (r.value as unknown[]);
    else {
      expect(singular).toBe(true);
      expect(r.failure.error_code).toBe('REF_NOT_FOUND');
      nodes = [];
    }
    if (c.result) expect(nodes).toEqual(c.result);
    else expect(c.results).toContainEqual(nodes);
  });
});
