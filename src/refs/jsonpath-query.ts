/**
 * RFC 9535 JSONPath for task_output references, through json-p3.
 *
 * json-p3 2.3.1 refuses every number literal whose text starts with "0" ("0.8", "0.25", "0e1"),
 * so the protocol's own `$.atoms[?(@.confidence>0.8)]` fails with "invalid number literal". RFC
 * 9535 section 2.3.5.1 allows them: `number = (int / "-0") [frac] [exp]`, `int = "0" / (["-"]
 * DIGIT1 *DIGIT)`. The same check also lets "-01" through, which the RFC forbids.
 *
 * The fix replaces exactly that check and nothing else. json-p3's Parser declares `parseNumber`
 * as a protected method meant for subclasses, and its environment builds one Parser; json-p3 does
 * not export the class, so we take it from the environment's parser, subclass it with an RFC
 * `parseNumber`, and install the subclass. The lexer, and therefore which text becomes a number
 * token, is untouched: no string rewriting. The install verifies itself and throws if json-p3's
 * internals move; `jsonpath-query.test.ts` pins the version and the behaviour.
 */
import type { JSONPathEnvironment, JSONPathQuery, JSONValue, jsonpath, Token } from 'json-p3';
import { BatonError } from '../core/index.ts';
import { onFirstUse } from '../deps/index.ts';

// json-p3 loads when the first environment is built (a resolver's first query), not at import.
const jsonP3 = onFirstUse<typeof import('json-p3')>('json-p3');

/** RFC 9535 `number`, anchored. ABNF literals are case-insensitive, hence [eE]. */
const RFC_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

type ParserConstructor = new (environment: JSONPathEnvironment) => object;

function installRfcNumberParser(env: JSONPathEnvironment): void {
  const stock: unknown = Reflect.get(env, 'parser');
  const Base: unknown = typeof stock === 'object' && stock !== null ? stock.constructor : undefined;
  if (typeof Base !== 'function' || typeof Base.prototype?.parseNumber !== 'function')
    throw new Error(
      'json-p3 changed: JSONPathEnvironment has no parser with parseNumber; revisit jsonpath-query.ts',
    );
  class RfcNumberParser extends (Base as ParserConstructor) {
    parseNumber(stream: { current: Token }): jsonpath.expressions.NumberLiteral {
      const token = stream.current;
      if (!RFC_NUMBER.test(token.value))
        throw new (jsonP3().JSONPathSyntaxError)(`invalid number literal '${token.value}'`, token);
      return new (jsonP3().jsonpath.expressions.NumberLiteral)(token, Number(token.value));
    }
  }
  Reflect.set(env, 'parser', new RfcNumberParser(env));
}

/** A strict RFC 9535 environment with number literals parsed as the RFC says. */
export function createJsonPathEnvironment(): JSONPathEnvironment {
  const env = new (jsonP3().JSONPathEnvironment)({ strict: true });
  installRfcNumberParser(env);
  // Fail at construction, not on some later query, if the install did not take.
  try {
    env.compile('$[?@.a==0.5]');
  } catch (cause) {
    throw new Error('json-p3 changed: the RFC number-literal fix did not take; revisit jsonpath-query.ts', {
      cause,
    });
  }
  return env;
}

export interface PathSelection {
  /** The selected values, in json-p3's (document) order. */
  values: unknown[];
  /** Where each value is: the keys and indices from the document root (same order as values). */
  locations: ReadonlyArray<ReadonlyArray<string | number>>;
  /** RFC 9535 singular query (names and indices only): selects at most one node. */
  singular: boolean;
}

/** Compiles and caches queries; one per resolver (no module-level state). */
export class JsonPathEvaluator {
  /**
   * Built at the first query, not with the evaluator: every resolver has one (createBaton builds a
   * resolver to check its options), and json-p3's load and the number-literal check cost a restarted
   * worker ~10-20 ms of CPU before its first run, for steps that may never query a path.
   */
  private env: JSONPathEnvironment | undefined;
  private readonly cache = new Map<string, JSONPathQuery>();

  constructor(private readonly cacheSize = 256) {}

  /** Parses `path`; throws BatonError REF_PATH_INVALID with json-p3's message. */
  compile(path: string): JSONPathQuery {
    const hit = this.cache.get(path);
    if (hit) {
      // Refresh recency: Map iteration order is insertion order.
      this.cache.delete(path);
      this.cache.set(path, hit);
      return hit;
    }
    let query: JSONPathQuery;
    this.env ??= createJsonPathEnvironment();
    try {
      query = this.env.compile(path);
    } catch (cause) {
      throw pathError(path, cause);
    }
    if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(path, query);
    return query;
  }

  select(path: string, document: unknown): PathSelection {
    const query = this.compile(path);
    try {
      const nodes = query.query(document as JSONValue).nodes;
      return {
        values: nodes.map((n) => n.value),
        locations: nodes.map((n) => n.location),
        singular: query.singularQuery(),
      };
    } catch (cause) {
      // e.g. JSONPathRecursionLimitError on data nested deeper than json-p3's limit
      throw pathError(path, cause);
    }
  }
}

function pathError(path: string, cause: unknown): BatonError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new BatonError(
    'REF_PATH_INVALID',
    `path ${JSON.stringify(path)} is not a valid JSONPath: ${detail}`,
    {
      cause,
      data: { field: 'path', path },
    },
  );
}
