/** Node's `require`, made the first time a dependency is loaded (see `index.ts` for why not at import). */
let nodeRequire: NodeJS.Require | undefined;

export function requireFromHere(): NodeJS.Require {
  nodeRequire ??= process.getBuiltinModule('node:module').createRequire(import.meta.url);
  return nodeRequire;
}

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
    loaded ??= requireFromHere()(specifier) as T;
    return loaded;
  };
}
