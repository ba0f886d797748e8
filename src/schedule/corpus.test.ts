import { describe, expect, it } from 'vitest';
import {
  type CorpusLanguage,
  type CorpusPart,
  loadCorpus,
  percent,
  score,
} from '../../test/schedule-corpus/corpus.ts';

/**
 * Baton's own corpus (test/schedule-corpus): several hundred cases per language, with a held-out
 * slice. Failures are printed for the development files only; the held-out files report their
 * scores and nothing else, so the grammar is never fitted to them.
 */

const FLOORS: Record<CorpusPart, { right: number; wrong: number }> = {
  dev: { right: 0.95, wrong: 0 },
  heldout: { right: 0.9, wrong: 0.01 },
};

function report(lang: CorpusLanguage, part: CorpusPart) {
  const cases = loadCorpus(lang, part);
  const s = score(cases);
  const lines = [
    `${lang}.${part}: ${s.right}/${s.total} right (${percent(s.right, s.total)}), ` +
      `${s.refused} refused, ${s.wrong} wrong instants (${percent(s.wrong, s.total)}), ${s.crash} crashes`,
  ];
  if (part === 'dev')
    for (const { c, got } of s.failures)
      lines.push(`  [${c.family}] ${c.ref} ${JSON.stringify(c.text)} expected ${c.expected} got ${got}`);
  console.log(lines.join('\n'));
  return s;
}

describe("Baton's own time-expression corpus", () => {
  for (const lang of ['en', 'zh'] as const)
    for (const part of ['dev', 'heldout'] as const)
      it(`reads ${lang}.${part} at ${FLOORS[part].right * 100} % or better, with at most ${FLOORS[part].wrong * 100} % wrong instants`, () => {
        const s = report(lang, part);
        expect(s.total).toBeGreaterThan(part === 'dev' ? 400 : 100);
        expect(s.right / s.total).toBeGreaterThanOrEqual(FLOORS[part].right);
        expect(s.wrong / s.total).toBeLessThanOrEqual(FLOORS[part].wrong);
        expect(s.crash).toBe(0);
      });
});
