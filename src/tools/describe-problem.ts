import type { ErrorObject } from 'ajv';
import { describe } from '../core/index.ts';

/**
 * Turns one Ajv error into `args.<path> must be …, got …`, naming the field the way a caller
 * writes it (`args.items[0].name`, `args["odd key"]`), so that an LLM can fix its own call.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function decodePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** `/items/0/a b` → `args.items[0]["a b"]`; the data decides whether a number is an index. */
export function argsPath(instancePath: string, args: unknown): string {
  let out = 'args';
  let at: unknown = args;
  if (instancePath === '') return out;
  for (const raw of instancePath.slice(1).split('/')) {
    const key = decodePointer(raw);
    if (Array.isArray(at) && /^\d+$/.test(key)) out += `[${key}]`;
    else out += IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  }
  return out;
}

function child(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function typeWords(type: unknown): string {
  const list = Array.isArray(type) ? type : String(type).split(',');
  return list.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}

function got(data: unknown): string {
  return `, got ${describe(data)}`;
}

function knownProperties(parentSchema: unknown): string {
  const props = (parentSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof props !== 'object' || props === null) return '';
  const names = Object.keys(props);
  return names.length > 0 ? `; known: ${names.join(', ')}` : '';
}

export function describeProblem(error: ErrorObject, args: unknown): string {
  const path = argsPath(error.instancePath, args);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${child(path, String(p.missingProperty))} must be given (a required argument)`;
    case 'additionalProperties':
      return `${child(path, String(p.additionalProperty))} must be absent: not an argument of this tool${knownProperties(error.parentSchema)}`;
    case 'type':
      return `${path} must be ${typeWords(p.type)}${got(error.data)}`;
    case 'enum': {
      const allowed = Array.isArray(p.allowedValues) ? p.allowedValues : [];
      return `${path} must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${got(error.data)}`;
    }
    case 'const':
      return `${path} must be ${JSON.stringify(p.allowedValue)}${got(error.data)}`;
    default: {
      // Ajv's own wording already reads "must …" for the other keywords (minLength, pattern, oneOf…).
      const message = error.message ?? `must satisfy "${error.keyword}"`;
      const isValue = error.data === null || typeof error.data !== 'object';
      return `${path} ${message}${isValue ? got(error.data) : ''}`;
    }
  }
}
