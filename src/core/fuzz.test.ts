/**
 * Property tests (fast-check): whatever a plan, a duration, a schedule expression or a nested value
 * looks like, validation answers with a BatonError or a result — never another exception, a stack
 * overflow or a hang.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSchedule } from '../schedule/index.ts';
import { parseDuration } from '../time/index.ts';
import { isBatonError } from './errors.ts';
import { assertJsonDepth } from './json-depth.ts';
import { validatePlan } from './plan.ts';

/** Runs `fn`; anything thrown must be a BatonError. */
function onlyBatonErrors(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!isBatonError(err)) throw err;
  }
}

const step = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(undefined)),
    aiName: fc.oneof(fc.constantFrom('a', 'b'), fc.anything()),
    draftArgs: fc.anything(),
    dependsOn: fc.oneof(
      fc.array(fc.oneof(fc.integer({ min: -2, max: 30 }), fc.string({ maxLength: 3 }))),
      fc.anything(),
    ),
    dependOn: fc.anything(),
  },
  { requiredKeys: [] },
);

describe('property: bad input is a BatonError, never a crash', () => {
  it('plan validation', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.record({ plan: fc.record({ steps: fc.array(step, { maxLength: 30 }) }) })),
        (raw) => {
          onlyBatonErrors(() => validatePlan(raw, { hasTask: (n) => n === 'a', checkInput: () => [] }));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('durations: a result is always whole milliseconds within 100 years', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double(),
          fc.integer(),
          fc.string(),
          fc.stringMatching(/^\d{1,25}(\.\d{1,3})?(ms|s|m|h|d)$/),
        ),
        (v) => {
          onlyBatonErrors(() => {
            const ms = parseDuration(v as number | string);
            expect(Number.isSafeInteger(ms) && ms >= 0 && ms <= 100 * 365.25 * 86_400_000).toBe(true);
          });
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('time expressions and schedule objects', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.stringMatching(/^in \d{1,15} (seconds|minutes|hours|days|years)$/),
      fc.stringMatching(/^\d{1,12}(分钟|小时|天)后$/),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          text,
          fc.anything(),
          fc.record({ when: text, timezone: fc.string(), language: fc.string() }, { requiredKeys: [] }),
        ),
        (v) => {
          onlyBatonErrors(() => {
            const p = parseSchedule(v, { now: Date.UTC(2026, 0, 1), timezone: 'UTC' });
            expect(Number.isFinite(p.at)).toBe(true);
          });
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('values nested at any depth', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), fc.boolean(), (depth, array) => {
        let v: unknown = 1;
        for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
        onlyBatonErrors(() => assertJsonDepth(v, 'input'));
      }),
      { numRuns: 50 },
    );
  });
});
