import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadEncoding } from './encodings.ts';

type Ranks = { default: ReadonlyArray<string | readonly number[] | undefined> };
const rankFiles: Record<string, () => Promise<Ranks>> = {
  o200k_base: () => import('gpt-tokenizer/bpeRanks/o200k_base') as Promise<Ranks>,
  cl100k_base: () => import('gpt-tokenizer/bpeRanks/cl100k_base') as Promise<Ranks>,
  p50k_base: () => import('gpt-tokenizer/bpeRanks/p50k_base') as Promise<Ranks>,
  r50k_base: () => import('gpt-tokenizer/bpeRanks/r50k_base') as Promise<Ranks>,
};
const PLAIN = { disallowedSpecial: new Set<string>() };

describe('starting merges from whole characters (bpe-chars.ts)', () => {
  it('rests on a property of every vocabulary: each token of 2+ bytes splits into two tokens of lower rank', async () => {
    for (const [name, load] of Object.entries(rankFiles)) {
      const ranks = (await load()).default;
      const byBytes = new Map<string, number>();
      const keys: string[] = [];
      ranks.forEach((t, r) => {
        if (t === undefined) return;
        const key = (typeof t === 'string' ? Buffer.from(t, 'utf8') : Buffer.from(t)).toString('latin1');
        keys[r] = key;
        byBytes.set(key, r);
      });
      const unsplittable: number[] = [];
      keys.forEach((key, r) => {
        if (key.length < 2) return;
        for (let k = 1; k < key.length; k++) {
          const u = byBytes.get(key.slice(0, k));
          const v = byBytes.get(key.slice(k));
          if (u !== undefined && v !== undefined && u < r && v < r) return;
        }
        unsplittable.push(r);
      });
      expect(unsplittable, name).toEqual([]);
    }
  });

  it('gives the reference count on text dense in multi-byte characters, spaces and punctuation', async () => {
    const chars = [
      ...'的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年動龘靐齉爨',
      ...'가나다라마바사아자차카타파하한국어토큰',
      ...'абвгдеёжзийклмнопрстуфхцчшщъыьэюя',
      ...'ابتثجحخدذرزسشصضطظعغفقكلمنهوي',
      ...'àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿßœ',
      ...'αβγδεζηθικλμνξοπρστυφχψω',
      ...'🚀🔥👩💻🇨🇳😀🙏',
      ...' ，。！？、；：“”（）《》…—　 .,!?-\'"\n\t',
      ...'aeiostnrAEIOST0123456789',
    ];
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const ours = await loadEncoding(name);
      const ref = (await import(`gpt-tokenizer/encoding/${name}`)) as {
        countTokens(t: string, o: typeof PLAIN): number;
      };
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...chars), { maxLength: 120 }), (cs) => {
          const s = cs.join('');
          return ours(s) === ref.countTokens(s, PLAIN);
        }),
        { numRuns: 400, seed: 21 },
      );
    }
  });
});
