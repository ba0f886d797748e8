/**
 * Dependencies loaded on first use (issue 15 item 4). Its own folder, not `core`: `core` stays free
 * of Node built-ins because the portable client imports it.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS dependency loaded the first time it is used instead of when Baton is imported, so
 * `import 'baton'` stays cheap (issue 15 item 4) and a program that never opens a SQLite file,
 * checks a tool's JSON Schema, resolves a JSONPath or logs never loads better-sqlite3, Ajv, json-p3
 * or pino. Only for CommonJS packages: `require` returns the same instance an ESM `import` of them
 * gets (one module cache), so nothing is loaded twice. Pass the type as `typeof import('name')`.
 */
export function onFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(specifier) as T;
    return loaded;
  };
}
