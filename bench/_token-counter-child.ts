/**
 * One exact o200k counter in a fresh process (bench/context.ts starts one per counter and text):
 * `node --import tsx bench/_token-counter-child.ts <counter> <text file>` prints
 * `{ load_ms, first_ms, second_ms, tokens }` (Baton's also `vocabulary_ms`, `code_ms` and
 * `tables_ms`, the parts of its load) — loading the counter, counting the text once (cold:
 * nothing counted before in this process) and again (warm: whatever the counter caches).
 * Special-token text counts as plain text in every counter, as in Baton.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Count = (text: string) => number;

async function load(name: string): Promise<Count> {
  switch (name) {
    case 'baton': {
      const { loadEncoding } = await import('../src/context/encodings.ts');
      return loadEncoding('o200k_base');
    }
    case 'gpt-tokenizer': {
      const m = await import('gpt-tokenizer/encoding/o200k_base');
      const plain = { disallowedSpecial: new Set<string>() };
      return (t) => m.countTokens(t, plain);
    }
    case 'tiktoken': {
      // The WASM bindings of OpenAI's Rust tiktoken; lite + one encoder, as its README advises.
      const { Tiktoken } = await import('tiktoken/lite');
      const o200k = createRequire(import.meta.url)('tiktoken/encoders/o200k_base.json') as {
        bpe_ranks: string;
        special_tokens: Record<string, number>;
        pat_str: string;
      };
      const enc = new Tiktoken(o200k.bpe_ranks, o200k.special_tokens, o200k.pat_str);
      return (t) => enc.encode_ordinary(t).length;
    }
    case 'js-tiktoken': {
      const { Tiktoken } = await import('js-tiktoken/lite');
      const ranks = (await import('js-tiktoken/ranks/o200k_base')).default;
      const enc = new Tiktoken(ranks);
      return (t) => enc.encode(t, [], []).length;
    }
    default:
      throw new Error(`unknown counter ${name}`);
  }
}

const [name, file] = process.argv.slice(2);
if (!name || !file) throw new Error('usage: _token-counter-child.ts <counter> <text file>');
const text = readFileSync(file, 'utf8');
const t0 = performance.now();
// Baton's load apart: importing the vocabulary module, importing its own code (run from source here:
// tsx compiles it on the fly, which a built package does not), then building the lookup tables.
const vocabulary = name === 'baton' ? await import('gpt-tokenizer/bpeRanks/o200k_base') : undefined;
const tv = performance.now();
if (vocabulary) await import('../src/context/encodings.ts');
const tc = performance.now();
const count = await load(name);
const t1 = performance.now();
const tokens = count(text);
const t2 = performance.now();
const again = count(text);
const t3 = performance.now();
if (again !== tokens) throw new Error(`${name}: second count ${again} ≠ first ${tokens}`);
console.log(
  JSON.stringify({
    load_ms: t1 - t0,
    ...(vocabulary ? { vocabulary_ms: tv - t0, code_ms: tc - tv, tables_ms: t1 - tc } : {}),
    first_ms: t2 - t1,
    second_ms: t3 - t2,
    tokens,
  }),
);
