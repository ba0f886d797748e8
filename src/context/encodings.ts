/**
 * Loading BPE encodings on demand. The rank tables come from gpt-tokenizer (o200k_base is several MB
 * and takes ~0.2 s to load), so only the encodings a planner is configured with are imported, each
 * through its own literal `import()` so bundlers can split them; `import 'baton'` loads none.
 * Counting itself is Baton's exact counter (bpe-counter.ts), which gives gpt-tokenizer's and
 * tiktoken's counts several times faster on a first count (bench/context.ts measures them side by
 * side). Encodings that share a rank table and a split regex share one set of tables.
 */

import { ValidationError } from '../core/index.ts';
import { createBpeCounter } from './bpe-counter.ts';
import { BpeTables, type RankTable } from './bpe-tables.ts';
import { O200kPieces } from './o200k-pieces.ts';

export const EncodingNames = [
  'o200k_base',
  'o200k_harmony',
  'cl100k_base',
  'p50k_base',
  'p50k_edit',
  'r50k_base',
] as const;

export type EncodingName = (typeof EncodingNames)[number];

/**
 * Counts the tokens of one text. Must be pure: same text, same count. `upTo`, when present, counts
 * only as far as a decision needs (see BoundedTokenCounter); Baton's BPE counters have it.
 */
export type TextTokenCounter = ((text: string) => number) & { readonly upTo?: BoundedTokenCounter };

/**
 * The tokens of a text when they are at most `limit`, else some number above `limit` (the count of a
 * prefix: counting stops once past the limit). For decisions such as "does this sentence fit", where
 * the exact size of what does not fit is never used.
 */
export type BoundedTokenCounter = (text: string, limit: number) => number;

/** `count.upTo` if the counter has it, else the full count (which is exact, so also bounded). */
export function countUpTo(count: TextTokenCounter, text: string, limit: number): number {
  return count.upTo ? count.upTo(text, limit) : count(text);
}

/** Whether `text` fits in `limit` tokens, counting no further than needed to tell. */
export function fitsIn(count: TextTokenCounter, text: string, limit: number): boolean {
  return countUpTo(count, text, limit) <= limit;
}

type Ranks = { default: RankTable };
type Split = 'o200k' | 'cl100k' | 'r50k';

async function splitRegex(kind: Split): Promise<RegExp> {
  const c = await import('gpt-tokenizer/encodingParams/constants');
  return kind === 'o200k'
    ? c.O200K_TOKEN_SPLIT_REGEX
    : kind === 'cl100k'
      ? c.CL100K_TOKEN_SPLIT_REGEX
      : c.R50K_TOKEN_SPLIT_REGEX;
}

/** One table per rank file, built once per process (o200k_harmony shares o200k_base's). */
const tables = new Map<string, Promise<BpeTables>>();
function tablesOf(file: string, load: () => Promise<Ranks>): Promise<BpeTables> {
  let t = tables.get(file);
  if (!t) {
    t = load().then((m) => new BpeTables(m.default));
    tables.set(file, t);
    t.catch(() => tables.delete(file));
  }
  return t;
}

async function counterOf(file: string, load: () => Promise<Ranks>, split: Split): Promise<TextTokenCounter> {
  const [t, regex] = await Promise.all([tablesOf(file, load), splitRegex(split)]);
  // Text from documents and tools may contain `<|endoftext|>` and similar: it is counted as the
  // plain text it is (special tokens are never recognized), as gpt-tokenizer does with an empty
  // disallowedSpecial set.
  return createBpeCounter(t, regex, split === 'o200k' ? new O200kPieces(regex) : undefined);
}

export function isEncodingName(name: unknown): name is EncodingName {
  return typeof name === 'string' && (EncodingNames as readonly string[]).includes(name);
}

const o200k = () => import('gpt-tokenizer/bpeRanks/o200k_base') as Promise<Ranks>;
const p50k = () => import('gpt-tokenizer/bpeRanks/p50k_base') as Promise<Ranks>;

/** Imports one encoding and returns its counter. */
export async function loadEncoding(name: EncodingName): Promise<TextTokenCounter> {
  switch (name) {
    case 'o200k_base':
    case 'o200k_harmony':
      return counterOf('o200k_base', o200k, 'o200k');
    case 'cl100k_base':
      return counterOf(
        'cl100k_base',
        () => import('gpt-tokenizer/bpeRanks/cl100k_base') as Promise<Ranks>,
        'cl100k',
      );
    case 'p50k_base':
    case 'p50k_edit':
      return counterOf('p50k_base', p50k, 'r50k');
    case 'r50k_base':
      return counterOf(
        'r50k_base',
        () => import('gpt-tokenizer/bpeRanks/r50k_base') as Promise<Ranks>,
        'r50k',
      );
    default:
      throw new ValidationError('encoding', `one of ${EncodingNames.join(', ')}`, name, {
        code: 'INVALID_OPTION',
      });
  }
}
