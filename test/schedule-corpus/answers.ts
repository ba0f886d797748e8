import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { conformancePath } from '../conformance-path.ts';
import { answer, loadCorpus } from './corpus.ts';

/**
 * Every answer the schedule grammar gives on the conformance corpora and on Baton's own corpus, as
 * one list of strings. Run as a script (`node --import tsx test/schedule-corpus/answers.ts`) it
 * prints them as JSON, so a test can compare the lists computed under different process zones.
 */

const CONFORMANCE_ZONE = 'Asia/Shanghai';
const CONFORMANCE_FILES = [
  'schedule-cases.json',
  'schedule-cases-zh-fst-time-nlu.json',
  'schedule-cases-future-reading.json',
  'schedule-date-cases.json',
];

interface ConformanceCase {
  input: string;
  reference: string;
}

export function allAnswers(): string[] {
  const out: string[] = [];
  for (const file of CONFORMANCE_FILES) {
    const text = readFileSync(conformancePath('datetime', file), 'utf8').replace(/^\uFEFF/, '');
    for (const c of JSON.parse(text) as ConformanceCase[]) {
      const now = DateTime.fromISO(c.reference.replace(/Z$/, ''), { zone: CONFORMANCE_ZONE }).toMillis();
      out.push(`${file} ${c.input} → ${answer({ text: c.input, now, zone: CONFORMANCE_ZONE })}`);
    }
  }
  for (const lang of ['en', 'zh'] as const)
    for (const part of ['dev', 'heldout'] as const)
      for (const c of loadCorpus(lang, part)) out.push(`${lang}.${part} ${c.text} → ${answer(c)}`);
  return out;
}

if (process.argv[1] === import.meta.filename) process.stdout.write(`${JSON.stringify(allAnswers())}\n`);
