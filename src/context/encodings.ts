/**
 * Loading BPE encodings on demand. Each gpt-tokenizer encoding carries its own rank table (o200k_base
 * is several MB and takes ~0.2 s to load), so only the encodings a planner is configured with are
 * imported, each through its own literal `import()` so bundlers can split them.
 */

import { ValidationError } from '../core/index.ts';

export const EncodingNames = [
  'o200k_base',
  'o200k_harmony',
  'cl100k_base',
  'p50k_base',
  'p50k_edit',
  'r50k_base',
] as const;

export type EncodingName = (typeof EncodingNames)[number];

/** Counts the tokens of one text. Must be pure: same text, same count. */
export type TextTokenCounter = (text: string) => number;

interface EncodingModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

// Text from documents and tools may contain `<|endoftext|>` and similar; gpt-tokenizer throws on
// them by default. An empty disallowed set counts them as the plain text they are.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

function counterOf(mod: EncodingModule): TextTokenCounter {
  return (text) => mod.countTokens(text, PLAIN_TEXT);
}

export function isEncodingName(name: unknown): name is EncodingName {
  return typeof name === 'string' && (EncodingNames as readonly string[]).includes(name);
}

/** Imports one encoding and returns its counter. */
export async function loadEncoding(name: EncodingName): Promise<TextTokenCounter> {
  switch (name) {
    case 'o200k_base':
      return counterOf(await import('gpt-tokenizer/encoding/o200k_base'));
    case 'o200k_harmony':
      return counterOf(await import('gpt-tokenizer/encoding/o200k_harmony'));
    case 'cl100k_base':
      return counterOf(await import('gpt-tokenizer/encoding/cl100k_base'));
    case 'p50k_base':
      return counterOf(await import('gpt-tokenizer/encoding/p50k_base'));
    case 'p50k_edit':
      return counterOf(await import('gpt-tokenizer/encoding/p50k_edit'));
    case 'r50k_base':
      return counterOf(await import('gpt-tokenizer/encoding/r50k_base'));
    default:
      throw new ValidationError('encoding', `one of ${EncodingNames.join(', ')}`, name, {
        code: 'INVALID_OPTION',
      });
  }
}
