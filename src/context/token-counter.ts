/**
 * Token counts with caches. A string is counted as itself; any other JSON value as the tokens of its
 * compact `JSON.stringify` text, in its own key order, because that is the text an agent is sent
 * (sorting keys would count a different text). Counts are cached:
 * - strings by content, in a bounded LRU per encoding; strings longer than `hashAbove` characters are
 *   keyed by their SHA-256 so the cache does not keep megabytes of text alive;
 * - objects and arrays by identity in a WeakMap (no stringify on a hit), and on a miss their JSON
 *   text goes through the string cache, so an equal copy of a counted value is a hit too.
 * Values are treated as immutable once counted: mutate an object in place and its cached count is
 * stale (call `forget(value)`). Resolved data references are snapshots, so this holds in the engine.
 */

import { createHash } from 'node:crypto';
import { ValidationError } from '../core/index.ts';
import type { TextTokenCounter } from './encodings.ts';
import { LruCache } from './lru-cache.ts';

export interface TokenCacheOptions {
  /** Strings remembered per encoding. @default 16384 */
  maxEntries?: number;
  /** Strings longer than this are keyed by a SHA-256 of their content. @default 1024 */
  hashAbove?: number;
}

export interface TokenCacheStats {
  hits: number;
  misses: number;
  entries: number;
}

export interface TokenCounter {
  /** Tokens of a value as `agent` sees it (string as is, anything else as compact JSON). */
  count(value: unknown, agent?: string): number;
  /** Tokens of a text with the encoding of `agent`. */
  countText(text: string, agent?: string): number;
  /**
   * A counter bound to one agent's encoding (for summarizers and splitters). Its `upTo` counts only
   * as far as a decision needs and bypasses the cache: stopping past a small limit costs less than
   * hashing the text for a lookup, and a count cut short is no count to remember.
   */
  forAgent(agent?: string): TextTokenCounter;
  encodingOf(agent?: string): string;
  /** Drops the cached count of an object that was mutated after it was counted. */
  forget(value: object): void;
  stats(): TokenCacheStats;
}

export interface TokenCounterConfig extends TokenCacheOptions {
  counters: ReadonlyMap<string, TextTokenCounter>;
  /** The encoding for an agent; `undefined` means the default one. */
  encodingFor: (agent: string | undefined) => string;
}

/** Compact JSON of a value, or a ValidationError when it is not JSON (cycles, BigInt). */
export function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch (cause) {
    throw new ValidationError('value', 'a JSON-serializable value', value, { cause });
  }
}

export function createTokenCounter(config: TokenCounterConfig): TokenCounter {
  const maxEntries = config.maxEntries ?? 16384;
  const hashAbove = config.hashAbove ?? 1024;
  const strings = new Map<string, LruCache<string, number>>();
  const objects = new WeakMap<object, Map<string, number>>();
  let hits = 0;
  let misses = 0;

  const counterFor = (encoding: string): TextTokenCounter => {
    const counter = config.counters.get(encoding);
    if (!counter)
      throw new ValidationError(
        'encoding',
        `one of the loaded encodings (${[...config.counters.keys()].join(', ')})`,
        encoding,
        {
          code: 'INVALID_OPTION',
        },
      );
    return counter;
  };

  const textCount = (text: string, encoding: string): number => {
    if (text.length === 0) return 0;
    let cache = strings.get(encoding);
    if (!cache) {
      cache = new LruCache(maxEntries);
      strings.set(encoding, cache);
    }
    const key = text.length > hashAbove ? `#${createHash('sha256').update(text).digest('base64')}` : text;
    const cached = cache.get(key);
    if (cached !== undefined) {
      hits++;
      return cached;
    }
    misses++;
    const n = counterFor(encoding)(text);
    cache.set(key, n);
    return n;
  };

  const count = (value: unknown, agent?: string): number => {
    const encoding = config.encodingFor(agent);
    if (typeof value === 'string') return textCount(value, encoding);
    if (value === null || typeof value !== 'object') return textCount(compactJson(value), encoding);
    const perEncoding = objects.get(value);
    const cached = perEncoding?.get(encoding);
    if (cached !== undefined) {
      hits++;
      return cached;
    }
    const n = textCount(compactJson(value), encoding);
    if (perEncoding) perEncoding.set(encoding, n);
    else objects.set(value, new Map([[encoding, n]]));
    return n;
  };

  return {
    count,
    countText: (text, agent) => textCount(text, config.encodingFor(agent)),
    forAgent: (agent) => {
      const encoding = config.encodingFor(agent);
      const bounded = counterFor(encoding).upTo;
      return Object.assign((text: string) => textCount(text, encoding), {
        upTo: bounded
          ? (text: string, limit: number) => (text.length === 0 ? 0 : bounded(text, limit))
          : (text: string) => textCount(text, encoding),
      });
    },
    encodingOf: (agent) => config.encodingFor(agent),
    forget: (value) => {
      objects.delete(value);
    },
    stats: () => ({
      hits,
      misses,
      entries: [...strings.values()].reduce((sum, c) => sum + c.size, 0),
    }),
  };
}
