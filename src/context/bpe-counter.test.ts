import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashText } from './bpe-tables.ts';
import { type EncodingName, loadEncoding, type TextTokenCounter } from './encodings.ts';

/**
 * Baton's counter must give the reference tokenizer's count exactly (the protocol's arithmetic is
 * built on these numbers). The reference is gpt-tokenizer's own encoder, with special-token text
 * counted as plain text, which equals tiktoken's `encode_ordinary`.
 */
interface Reference {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}
const references: Record<string, () => Promise<Reference>> = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
  p50k_base: () => import('gpt-tokenizer/encoding/p50k_base'),
  r50k_base: () => import('gpt-tokenizer/encoding/r50k_base'),
};
const PLAIN = { disallowedSpecial: new Set<string>() };

async function pair(name: EncodingName): Promise<[TextTokenCounter, (t: string) => number]> {
  const ref = await references[name]!();
  return [await loadEncoding(name), (t) => ref.countTokens(t, PLAIN)];
}

function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Our own mixed text: prose in several scripts, code, JSON, numbers, odd whitespace and emoji.
const SAMPLES = [
  'The scheduler retries each step with a growing timeout, then hands back partial results.',
  '注意力机制允许模型在序列的所有位置之间直接建立联系，从而实现高效的并行计算。',
  '数据库查询结果被压缩为摘要，保留表头和统计信息；引用传递只发送预览',
  'トークン数を正確に数えることが重要です。カタカナとひらがな、漢字の混在。',
  '토큰 예산 안에서 데이터를 참조로 전달합니다.',
  'Модель обрабатывает длинные документы по частям.',
  'يتم تمرير البيانات بالمرجع ضمن ميزانية الرموز.',
  'const plan = await planner.planContext({ taskId: "t_1", inputs: [] }); // 95_000 tokens',
  '{"atom_id":"sch_001","atom_type":"claim","confidence":0.93,"tags":["nlp","attention"]}',
  '3.14159265358979 1,234,567.89 2026-11-25T12:00:00Z 0x7fffffff 1e-9',
  '   \t\n\n  indented\r\n\tline   ',
  'emoji 🚀🔥👩‍💻 flags 🇨🇳🇺🇸 and ZWJ sequences; math ∑∫√∞ ≤ ≥',
  "don't won't it's we'll they've I'm you'd SHOULDN'T",
  'Straße naïve façade coöperate résumé Ångström',
  '<|endoftext|> <|im_start|>user<|im_end|> <|fim_prefix|>',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '————————————————————————————————— ……………… ！！！？？？',
];
function corpus(seed: number, pieces: number): string {
  const next = random(seed);
  const out: string[] = [];
  for (let i = 0; i < pieces; i++) {
    const s = SAMPLES[Math.floor(next() * SAMPLES.length)]!;
    const from = Math.floor(next() * s.length * 0.5);
    out.push(s.slice(from), next() < 0.2 ? '\n\n' : ' ');
  }
  return out.join('');
}

const HAN =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质鑫龘靐齉爨';

describe('exact BPE counter', () => {
  for (const name of ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'] as const) {
    it(`${name}: equals the reference on a mixed multilingual corpus`, async () => {
      const [ours, reference] = await pair(name);
      const text = corpus(7, 3000);
      expect(text.length).toBeGreaterThan(100_000);
      expect(ours(text)).toBe(reference(text));
      // Piece by piece too, so one miscounted piece cannot hide behind another.
      for (const s of SAMPLES) expect(ours(s), s).toBe(reference(s));
    });
  }

  it('equals the reference on generated strings of any code points (lone surrogates included)', async () => {
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const [ours, reference] = await pair(name);
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => ours(s) === reference(s)),
        { numRuns: 200, seed: 18 },
      );
      fc.assert(
        fc.property(
          fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom(...SAMPLES)), {
            maxLength: 12,
          }),
          (parts) => {
            const s = parts.join('');
            return ours(s) === reference(s);
          },
        ),
        { numRuns: 150, seed: 19 },
      );
    }
  });

  it('equals the reference on long single pieces (the heap merge): Han runs, letters, digits-free code', async () => {
    const [ours, reference] = await pair('o200k_base');
    const next = random(3);
    const pick = (alphabet: string, n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    fc.assert(
      fc.property(
        fc.integer({ min: 40, max: 700 }),
        fc.constantFrom(HAN, 'abcdefghijklmnopqrstuvwxyz', 'ACGT', 'аеиоунтсрвлкмдпяыь', 'ab'),
        (n, alphabet) => {
          const s = pick(alphabet, n);
          return ours(s) === reference(s);
        },
      ),
      { numRuns: 60, seed: 20 },
    );
    const run = pick(HAN, 3000);
    expect(ours(run)).toBe(reference(run));
  });

  it('equals the reference on invented words (the short merge): syllables, letters, up to 130 parts', async () => {
    // Words that are no token go through the packed short merge (bpe-merger.ts) below 129 parts and
    // the heap above: names, identifiers and made-up words, each piece merged from its bytes.
    const syllables = 'ba ke ri tho ung st qu x zz ion ment ing er ly ous ae oo ck ph'.split(' ');
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const [ours, reference] = await pair(name);
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom(...syllables), { minLength: 1, maxLength: 40 }),
          fc.constantFrom('', ' ', 'X', '_', ' Mc'),
          fc.stringMatching(/^[a-zA-Z]{0,12}$/),
          (parts, prefix, tail) => {
            const word = prefix + parts.join('') + tail;
            return ours(word) === reference(word);
          },
        ),
        { numRuns: 400, seed: 23 },
      );
      const next = random(29);
      for (const n of [2, 3, 8, 31, 127, 128, 129, 130]) {
        const word = Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join(
          '',
        );
        expect(ours(word), `${name} ${n} letters`).toBe(reference(word));
      }
    }
  });

  it('counts a long text without a separator without stalling (no quadratic merge)', async () => {
    const ours = await loadEncoding('o200k_base');
    // Base64-like letters: one regex piece of 300 KB. gpt-tokenizer's quadratic merge would take
    // many minutes; the heap merge is O(n log n). The count is between the two bounds BPE allows.
    const next = random(5);
    const letters = Array.from({ length: 300_000 }, () =>
      String.fromCharCode(97 + Math.floor(next() * 26)),
    ).join('');
    const n = ours(letters);
    expect(n).toBeGreaterThan(letters.length / 16);
    expect(n).toBeLessThan(letters.length);
  });

  it('is a pure function: the same text gives the same count with warm caches', async () => {
    const [ours, reference] = await pair('o200k_base');
    const text = corpus(11, 500);
    const first = ours(text);
    expect(ours(text)).toBe(first);
    expect(first).toBe(reference(text));
  });

  it('counts only as far as a limit: exact at or below it, above it otherwise', async () => {
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const ours = await loadEncoding(name);
      const next = random(5);
      for (let i = 0; i < 200; i++) {
        const text = corpus(100 + i, 1 + Math.floor(next() * 6));
        const exact = ours(text);
        const limit = Math.floor(next() * exact * 1.5);
        const bounded = ours.upTo!(text, limit);
        if (exact <= limit) expect(bounded, text).toBe(exact);
        else {
          expect(bounded, text).toBeGreaterThan(limit);
          expect(bounded, text).toBeLessThanOrEqual(exact);
        }
      }
    }
  });
});

describe('remembered piece counts', () => {
  it('stay exact when pieces recur, across counters of one table, and after the memo starts over', async () => {
    const [ours, reference] = await pair('o200k_base');
    const next = random(23);
    const syllables = ['ba', 'qe', 'zu', 'xo', 'vi', 'ka', 'jo', 'wy', '注意', '机制', '力'];
    // Over 50,000 distinct invented words (pieces that need merging): more than the memo keeps, so
    // it starts over while counting; then the same words again, in another order.
    const words = Array.from({ length: 60_000 }, (_, i) =>
      Array.from({ length: 4 + (i % 4) }, () => syllables[Math.floor(next() * syllables.length)]).join(''),
    );
    const text = words.join(' ');
    expect(ours(text)).toBe(reference(text));
    const shuffled = [...words].reverse().join(' ');
    expect(ours(shuffled)).toBe(reference(shuffled));
    const fresh = await loadEncoding('o200k_base');
    expect(fresh(text)).toBe(reference(text));
    for (const w of words.slice(0, 300)) expect(fresh(` ${w}`), w).toBe(reference(` ${w}`));
  });

  it('tell apart pieces whose hashes are equal', async () => {
    const [, reference] = await pair('o200k_base');
    // Two pieces with the same 32-bit polynomial hash (found by search): the memo is keyed by it.
    const [a, b] = [' xowytiontionwy', ' bajoxovijo'];
    expect(hashText(a)).toBe(hashText(b));
    expect(reference(a)).not.toBe(reference(b));
    const fresh = await loadEncoding('o200k_base');
    expect([fresh(a), fresh(b), fresh(`${b}${a}`)]).toEqual([
      reference(a),
      reference(b),
      reference(`${b}${a}`),
    ]);
  });
});
