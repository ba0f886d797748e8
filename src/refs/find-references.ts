/**
 * Where references sit in a step's input, and how resolved values replace them.
 *
 * Two forms count (protocol 002 sections 2.1 and 7.1):
 * - any object `{ "data_reference": {...} }` anywhere (a sibling `fallback_config` is allowed and
 *   becomes the reference's own fallback);
 * - each element of an array under a `data_references` key: a bare reference `{ "ref_type": ... }`
 *   (or the wrapped form).
 * A reference's own content is not searched further.
 */
import { isBatonError, ValidationError } from '../core/index.ts';
import { type DataReference, parseDataReference } from './reference-schema.ts';

/** Path segments from the input's root to a reference (array indices as decimal strings). */
export type Pointer = string[];

export interface FoundRawReference {
  pointer: Pointer;
  /** The reference object as written (fallback_config from a wrapper merged in). */
  raw: unknown;
  /** Set when the wrapper itself is malformed. */
  problem?: ValidationError;
}

/** Marks a reference whose fallback was `skip`: substitution removes it. */
export const SKIPPED: unique symbol = Symbol('baton.refs.skipped');
export type ResolvedValue = unknown;

/** RFC 6901 JSON Pointer of a pointer: the key of `substituteReferences`' map. */
export function pointerKey(pointer: readonly string[]): string {
  return pointer.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every reference in `input`, valid or not, in document order. */
/**
 * True when the input holds a reference anywhere (by the rules findReferences uses), without
 * parsing any: the cheap check the engine makes before deciding to resolve.
 */
export function hasReferences(input: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (Array.isArray(input)) return input.some((v) => hasReferences(v, depth + 1));
  if (!isPlainObject(input)) return false;
  if (Object.hasOwn(input, 'data_reference')) return true;
  return Object.entries(input).some(
    ([key, value]) => (key === 'data_references' && Array.isArray(value)) || hasReferences(value, depth + 1),
  );
}

export function findRawReferences(input: unknown): FoundRawReference[] {
  const out: FoundRawReference[] = [];
  const walk = (node: unknown, pointer: Pointer): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        walk(item, [...pointer, String(i)]);
      });
      return;
    }
    if (!isPlainObject(node)) return;
    if (Object.hasOwn(node, 'data_reference')) {
      out.push(unwrap(node, pointer));
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      const at = [...pointer, key];
      if (key === 'data_references' && Array.isArray(value)) {
        value.forEach((item, i) => {
          const p = [...at, String(i)];
          out.push(
            isPlainObject(item) && Object.hasOwn(item, 'data_reference')
              ? unwrap(item, p)
              : { pointer: p, raw: item },
          );
        });
      } else walk(value, at);
    }
  };
  walk(input, []);
  return out;
}

function unwrap(wrapper: Record<string, unknown>, pointer: Pointer): FoundRawReference {
  const field = fieldOf(pointer);
  const extra = Object.keys(wrapper).find((k) => k !== 'data_reference' && k !== 'fallback_config');
  const inner = wrapper.data_reference;
  if (extra !== undefined)
    return {
      pointer,
      raw: inner,
      problem: new ValidationError(
        `${field}.${extra}`,
        'absent: a reference wrapper holds only data_reference and fallback_config',
        undefined,
        { code: 'REF_FORMAT_ERROR' },
      ),
    };
  if (!Object.hasOwn(wrapper, 'fallback_config') || !isPlainObject(inner)) return { pointer, raw: inner };
  if (Object.hasOwn(inner, 'fallback_config'))
    return {
      pointer,
      raw: inner,
      problem: new ValidationError(
        `${field}.fallback_config`,
        'given once (beside or inside data_reference, not both)',
        undefined,
        { code: 'REF_FORMAT_ERROR' },
      ),
    };
  return { pointer, raw: { ...inner, fallback_config: wrapper.fallback_config } };
}

/** A readable field name for errors: `input.data_references[0]`. */
export function fieldOf(pointer: readonly string[]): string {
  let out = 'input';
  for (const p of pointer) out += /^\d+$/.test(p) ? `[${p}]` : `.${p}`;
  return out;
}

/**
 * Every reference in `input`, validated. Throws a ValidationError (code REF_FORMAT_ERROR, or
 * REF_FILTER_ERROR for a bad filter) naming the field, e.g. `input.data_references[1].task_id`.
 */
export function findReferences(input: unknown): Array<{ pointer: Pointer; ref: DataReference }> {
  return findRawReferences(input).map(({ pointer, raw, problem }) => {
    if (problem) throw problem;
    return { pointer, ref: parseDataReference(raw, fieldOf(pointer)) };
  });
}

/** Task ids that `input` reads through task_output references, first appearance first. */
export function referencedTaskIds(input: unknown): string[] {
  const ids = new Set<string>();
  for (const { pointer, raw, problem } of findRawReferences(input)) {
    if (problem) throw problem;
    let ref: DataReference;
    try {
      ref = parseDataReference(raw, fieldOf(pointer));
    } catch (err) {
      // A bad filter is ignored when the reference resolves (002 §3.2), so it does not stop the
      // plan: the reference still names the task it reads.
      if (!isBatonError(err, 'REF_FILTER_ERROR') || !isPlainObject(raw)) throw err;
      const { filter: _ignored, ...rest } = raw;
      ref = parseDataReference(rest, fieldOf(pointer));
    }
    if (ref.ref_type === 'task_output') ids.add(ref.task_id);
  }
  return [...ids];
}

/**
 * A new input where each reference whose pointer key is in `resolved` is replaced by its value,
 * or removed when the value is SKIPPED (from its object, or from its array, which closes up).
 * References missing from the map stay as written. Containers are copied; leaves are shared.
 */
export function substituteReferences(input: unknown, resolved: ReadonlyMap<string, ResolvedValue>): unknown {
  const rebuild = (node: unknown, pointer: Pointer, inReferenceArray: boolean): unknown => {
    const key = pointerKey(pointer);
    // A map entry replaces only a node that is a reference there, never arbitrary data.
    const isReference = inReferenceArray || (isPlainObject(node) && Object.hasOwn(node, 'data_reference'));
    if (isReference && resolved.has(key)) return resolved.get(key);
    if (Array.isArray(node)) {
      const items = node.map((item, i) => rebuild(item, [...pointer, String(i)], false));
      return items.filter((item) => item !== SKIPPED);
    }
    if (!isPlainObject(node) || isReference) return node;
    // Object.fromEntries defines own properties, so a "__proto__" key stays data.
    return Object.fromEntries(
      Object.entries(node)
        .map(([k, v]) => {
          const at = [...pointer, k];
          if (k !== 'data_references' || !Array.isArray(v)) return [k, rebuild(v, at, false)] as const;
          const items = v.map((item, i) => rebuild(item, [...at, String(i)], true));
          return [k, items.filter((item) => item !== SKIPPED)] as const;
        })
        .filter(([, v]) => v !== SKIPPED),
    );
  };
  const out = rebuild(input, [], false);
  return out === SKIPPED ? undefined : out;
}
