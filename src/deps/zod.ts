/**
 * zod, loaded the first time a schema of Baton's is used rather than when Baton is imported: zod is
 * ~95 modules, half of what `import 'baton'` cost (issue 15 item 4), and a program that never
 * parses a data reference, a webhook target or a configuration file does not need it.
 */
import type { z } from 'zod';

/** zod's `z` namespace, the type a schema builder receives. */
export type Zod = typeof z;

/**
 * An ES module dependency loaded synchronously on first use (its callers are synchronous): it
 * requires the package's ESM entry — the file `import 'name'` resolves to — which Node ≥ 20.19
 * loads synchronously (require(esm)) into the same module instance an `import` gets, so a user's
 * zod or luxon and Baton's are one copy, loaded once. `require('name')` would pick a package's
 * CommonJS build instead: a second copy beside the user's. Under a module loader hook (tsx) Node
 * keeps the two apart; zod and luxon work either way. Pass the type as `typeof import('name')`.
 */
export function esmOnFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded === undefined) {
      const { fileURLToPath } = process.getBuiltinModule('node:url');
      const { createRequire } = process.getBuiltinModule('node:module');
      const entry = fileURLToPath(import.meta.resolve(specifier));
      loaded = createRequire(import.meta.url)(entry) as T;
    }
    return loaded;
  };
}

const zodModule = esmOnFirstUse<typeof import('zod')>('zod');

/** zod itself, loaded on first call (schema users such as `parseDataReference` are synchronous). */
export function zod(): Zod {
  return zodModule().z;
}

/**
 * A group of schemas built together, with zod, the first time the returned function is called —
 * for a module's own parsing (no proxy in the way); export them through `lazySchema`.
 */
export function schemasOnFirstUse<T>(build: (z: Zod) => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build(zod());
    return built;
  };
}

/**
 * A schema built the first time anything reads it (`.parse`, `.safeParse`, `.shape`, `instanceof`,
 * use inside another schema): the exported schemas of `baton/refs`, `baton/budget`, … stay zod
 * schemas for their users without building them, or loading zod, at import. Members are read from
 * the built schema with itself as the receiver, so zod binds its methods to the real schema.
 * `Object.keys` of the proxy is empty (nothing Baton or zod relies on).
 */
export function lazySchema<T extends object>(build: (z: Zod) => T): T {
  let built: T | undefined;
  const schema = (): T => {
    built ??= build(zod());
    return built;
  };
  return new Proxy(Object.create(null) as T, {
    get: (_, key) => Reflect.get(schema(), key, schema()),
    has: (_, key) => Reflect.has(schema(), key),
    getPrototypeOf: () => Object.getPrototypeOf(schema()),
  });
}
