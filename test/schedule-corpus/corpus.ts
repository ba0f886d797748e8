import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DateTime } from 'luxon';
import { isBatonError } from '../../src/core/index.ts';
import { parseSchedule } from '../../src/schedule/index.ts';

/** Reads and scores Baton's own time-expression corpus (format and conventions: README.md here). */

export type CorpusLanguage = 'en' | 'zh';
export type CorpusPart = 'dev' | 'heldout';

export interface CorpusCase {
  ref: string;
  now: number;
  zone: string;
  text: string;
  /** A wall-clock time "YYYY-MM-DD HH:MM[:SS]" in `zone`, or "refuse" / "beyond". */
  expected: string;
  family: string;
}

export type Verdict = 'right' | 'refused' | 'wrong' | 'crash';

export interface Outcome {
  verdict: Verdict;
  /** What came back: a wall-clock time with `past` marker, or the error code. */
  got: string;
}

const DIR = import.meta.dirname;

export function loadCorpus(lang: CorpusLanguage, part: CorpusPart): CorpusCase[] {
  const lines = readFileSync(resolve(DIR, `${lang}.${part}.txt`), 'utf8').split('\n');
  const refs = new Map<string, { now: number; zone: string }>();
  const cases: CorpusCase[] = [];
  for (const line of lines) {
    const ref = /^@ref (\S+) (\S+) (\S+)$/.exec(line);
    if (ref) {
      const at = DateTime.fromISO(ref[2] as string, { zone: ref[3] as string });
      if (!at.isValid) throw new Error(`bad reference line: ${line}`);
      refs.set(ref[1] as string, { now: at.toMillis(), zone: ref[3] as string });
      continue;
    }
    if (line.startsWith('#') || line.trim() === '') continue;
    const [name, text, expected, family] = line.split(' | ').map((f) => f.trim());
    const r = refs.get(name as string);
    if (!r || text === undefined || expected === undefined || family === undefined)
      throw new Error(`bad case line: ${line}`);
    cases.push({ ref: name as string, ...r, text, expected, family });
  }
  return cases;
}

/** The answer as one comparable string: "2026-03-06 09:00:00", "… past", or an error code. */
export function answer(c: Pick<CorpusCase, 'text' | 'now' | 'zone'>): string {
  try {
    const p = parseSchedule(c.text, { now: c.now, timezone: c.zone });
    const wall = DateTime.fromMillis(p.at, { zone: c.zone }).toFormat('yyyy-MM-dd HH:mm:ss');
    return p.past ? `${wall} past` : wall;
  } catch (err) {
    if (isBatonError(err)) return err.code;
    // Anything else is a bug in the parser: reported as such, never as a refusal.
    return `CRASH ${(err as Error).message}`;
  }
}

function expectedAnswer(c: CorpusCase): string {
  if (c.expected === 'refuse') return 'TIME_EXPRESSION_INVALID';
  if (c.expected === 'beyond') return 'SCHEDULE_BEYOND_HORIZON';
  const at = DateTime.fromFormat(
    c.expected,
    c.expected.length > 16 ? 'yyyy-MM-dd HH:mm:ss' : 'yyyy-MM-dd HH:mm',
    {
      zone: c.zone,
    },
  );
  if (!at.isValid) throw new Error(`bad expected value "${c.expected}" for "${c.text}"`);
  const wall = at.toFormat('yyyy-MM-dd HH:mm:ss');
  return at.toMillis() < c.now ? `${wall} past` : wall;
}

export function judge(c: CorpusCase): Outcome {
  const got = answer(c);
  const want = expectedAnswer(c);
  if (got === want) return { verdict: 'right', got };
  if (got.startsWith('CRASH')) return { verdict: 'crash', got };
  return { verdict: /^\d{4}-/.test(got) ? 'wrong' : 'refused', got };
}

export interface Score {
  total: number;
  right: number;
  refused: number;
  wrong: number;
  crash: number;
  failures: Array<{ c: CorpusCase; got: string }>;
}

export function score(cases: readonly CorpusCase[]): Score {
  const s: Score = { total: cases.length, right: 0, refused: 0, wrong: 0, crash: 0, failures: [] };
  for (const c of cases) {
    const o = judge(c);
    s[o.verdict]++;
    if (o.verdict !== 'right') s.failures.push({ c, got: o.got });
  }
  return s;
}

export const percent = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
