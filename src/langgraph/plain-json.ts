/**
 * A faster way to the bytes LangGraph's default serializer writes, for the data it writes most:
 * checkpoints, metadata and channel values made of strings, numbers, booleans, null, arrays and
 * plain objects. JsonPlusSerializer runs `JSON.stringify` with a replacer function (which takes V8
 * off its fast path: one call per key) after walking the value for cycles, then encodes with a new
 * TextEncoder; for plain data its replacer returns every value unchanged, so plain
 * `JSON.stringify` writes the same text. A value that is not plain all the way down goes to the
 * serializer, and so does everything when the serializer is not exactly JsonPlusSerializer (a
 * subclass or another serializer decides its own bytes).
 *
 * The equivalence is checked, not assumed: `plainJson` compares its bytes with the serializer's on
 * a probe before it is used, so a future JsonPlusSerializer that writes plain data differently
 * switches the fast path off instead of changing what is stored.
 */
import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';

/** Nesting past which a value is left to the serializer (a cycle also ends here). */
const MAX_DEPTH = 100;

/**
 * Whether `JSON.stringify(value)` is what JsonPlusSerializer writes: no `undefined` (it writes a
 * marker where JSON drops the key), no class instance, Map, Set, Date, typed array or `toJSON`
 * (its replacer or their own method changes them), no object it reads as a Send (`lg_name`).
 */
export function isPlainJson(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        // A hole reads as undefined, which JSON writes as null and the serializer as a marker.
        for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      const o = value as Record<string, unknown>;
      if (typeof o.toJSON === 'function' || o.lg_name === 'Send') return false;
      for (const k in o) if (!isPlainJson(o[k], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

/** Serializes like `serde.dumpsTyped`, synchronously when the fast path applies. */
export type Dump = (value: unknown) => [string, Uint8Array] | Promise<[string, Uint8Array]>;

/** A value of every plain kind, and strings JSON escapes, for the check. */
const PROBE = {
  s: 'plain "quoted" \\ \n\t \u0001 é 漢字 🎉 \ud800',
  n: [0, -0, 1.5, -2e-7, 1e21, Number.MAX_SAFE_INTEGER, Number.NaN, Number.POSITIVE_INFINITY],
  b: [true, false, null],
  nested: { a: [{ b: { c: [] } }], empty: {} },
  __proto__: null,
};

/**
 * The dump a saver uses: the fast path when `serde` is exactly JsonPlusSerializer and writes the
 * probe exactly as `JSON.stringify` does; otherwise `serde.dumpsTyped` itself.
 */
export async function plainJson(serde: SerializerProtocol): Promise<Dump> {
  const slow: Dump = (value) => serde.dumpsTyped(value);
  if (Object.getPrototypeOf(serde) !== JsonPlusSerializer.prototype) return slow;
  const [type, bytes] = await serde.dumpsTyped(PROBE);
  if (type !== 'json' || !Buffer.from(JSON.stringify(PROBE)).equals(Buffer.from(bytes))) return slow;
  return (value) =>
    isPlainJson(value) ? ['json', Buffer.from(JSON.stringify(value))] : serde.dumpsTyped(value);
}
