import fc from 'fast-check';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { BpeMerger } from './bpe-merger.ts';
import { BpeTables, type RankTable } from './bpe-tables.ts';
import { loadEncoding } from './encodings.ts';

/**
 * A piece of non-ASCII letters is counted as the sum of its segments between "cuts" (bpe-cuts.ts).
 * Checked three ways: no pair of characters that occurs in a token's text is ever a cut; the cut
 * count equals merging the whole piece at once; and it equals the reference tokenizer.
 */
const PLAIN = { disallowedSpecial: new Set<string>() };

async function setup() {
  const ranks = (await import('gpt-tokenizer/bpeRanks/o200k_base')).default as RankTable;
  const ref = await import('gpt-tokenizer/encoding/o200k_base');
  const tables = new BpeTables(ranks);
  return {
    tables,
    merger: new BpeMerger(tables),
    ours: await loadEncoding('o200k_base'),
    reference: (t: string) => ref.countTokens(t, PLAIN),
  };
}

// Han (frequent characters, and words that are o200k tokens so uncut pairs occur), kana, Hangul,
// Cyrillic, Arabic, Thai, CJK punctuation, full-width forms and a few that are no single token.
const ALPHABETS = [
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说',
  '中国人民共和国我们他们这个那个可以没有什么因为所以但是已经时候自己现在问题工作',
  'ひらがなカタカナとトークンをですます漢字の混在',
  '토큰예산안에서데이터를참조로전달합니다',
  'модельобрабатываетдлинныедокументы',
  'يتمتمريرالبياناتبالمرجع',
  'ภาษาไทยการนับโทเค็น',
  '，。？！、；：（）【】「」『』…—～',
  'ＡＢＣａｂｃ１２３',
  '鑫龘靐齉爨𠀀𪚥',
];

describe('piece cuts (o200k)', () => {
  it('never cut between two characters that are adjacent in a token', async () => {
    const { tables, merger } = await setup();
    let checked = 0;
    for (const t of tables.text) {
      if (t === null) continue;
      for (let i = 1; i < t.length; i++) {
        if (merger.cuts.isCut(t.charCodeAt(i - 1), t.charCodeAt(i))) throw new Error(`cut inside token ${t}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(800_000);
    // And they do cut running Chinese: most pairs of frequent characters are in no token.
    const han = ALPHABETS[0]!;
    let cuts = 0;
    for (let i = 1; i < han.length; i++)
      if (merger.cuts.isCut(han.charCodeAt(i - 1), han.charCodeAt(i))) cuts++;
    expect(cuts).toBeGreaterThan(han.length / 2);
    expect(merger.cuts.isCut('中'.charCodeAt(0), '国'.charCodeAt(0))).toBe(false);
  });

  it('give the count of the whole piece merged at once, and the reference count', async () => {
    const { merger, ours, reference } = await setup();
    let whole = 0;
    const alphabet = fc.constantFrom(...ALPHABETS);
    const piece = fc
      .array(fc.tuple(alphabet, fc.nat()), { minLength: 1, maxLength: 60 })
      .map((picks) => picks.map(([a, k]) => [...a][k % [...a].length]).join(''));
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 6 }),
        fc.constantFrom(' ', '', '\n', 'x'),
        (parts, sep) => {
          const text = parts.join(sep);
          const n = ours(text);
          // A text that is one pre-tokenization piece: the cut sum against the uncut merge.
          if (text.match(O200K_TOKEN_SPLIT_REGEX)?.length === 1) {
            whole++;
            expect(n).toBe(merger.countPiece(text));
          }
          return n === reference(text);
        },
      ),
      { numRuns: 400, seed: 181 },
    );
    expect(whole).toBeGreaterThan(40);
  });

  it('counts long runs of Chinese exactly (cut, memo and heap paths together)', async () => {
    const { ours, reference } = await setup();
    const chars = [...ALPHABETS[0]!, ...ALPHABETS[1]!];
    let a = 7;
    const next = () => {
      a = (Math.imul(a, 1103515245) + 12345) >>> 0;
      return a / 2 ** 32;
    };
    for (const n of [2, 3, 50, 200, 2000]) {
      const run = Array.from({ length: n }, () => chars[Math.floor(next() * chars.length)]).join('');
      expect(ours(run), run.slice(0, 20)).toBe(reference(run));
      expect(ours(`${run}。${run}`)).toBe(reference(`${run}。${run}`));
    }
  });
});
