import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BatonError } from '../core/index.ts';
import type { TaskContext } from '../runtime/index.ts';

/**
 * Finding a tool's handler in a module: TypeScript through tsx (Node 20 cannot strip types),
 * JavaScript through a plain import; the named export, else the default export, else `handler`.
 * Paths are checked to stay inside the tool's folder, symlinks included.
 */

/** A handler from a module: its argument types are whatever its config.json describes. */
export type LoadedHandler = (args: Record<string, unknown>, ctx: TaskContext) => unknown;

/** True when `path` is `root` or inside it (both already resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** The real path of `path`, refused (INVALID_INPUT) when it leaves `root`, e.g. by `..` or a symlink. */
export function realPathInside(root: string, path: string, what: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `cannot read ${what} ${path}: ${(err as Error).message}`, {
      cause: err,
      data: { path },
    });
  }
  if (!isInside(realpathSync(root), real))
    throw new BatonError('INVALID_INPUT', `${what} ${path} leaves ${root} (path traversal is refused)`, {
      data: { path, root },
    });
  return real;
}

async function importModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  try {
    if (/\.[cm]?tsx?$/.test(path)) {
      const { tsImport } = await import('tsx/esm/api');
      return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
    }
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `cannot load ${path}: ${(err as Error).message}`, {
      cause: err,
      data: { path },
    });
  }
}

function pick(exports: Record<string, unknown>, name: string | undefined): unknown {
  if (name !== undefined) return exports[name];
  const def = exports.default;
  if (typeof def === 'function') return def;
  // tsx may hand a CommonJS-style module back with its exports one level deeper.
  if (typeof def === 'object' && def !== null) {
    const inner = def as Record<string, unknown>;
    if (typeof inner.default === 'function') return inner.default;
    if (typeof inner.handler === 'function') return inner.handler;
  }
  return exports.handler;
}

/** Imports `path` and returns its handler: `exportName`, else the default export, else `handler`. */
export async function importHandler(path: string, exportName?: string): Promise<LoadedHandler> {
  const handler = pick(await importModule(path), exportName);
  if (typeof handler !== 'function') {
    const expected =
      exportName !== undefined
        ? `an export named "${exportName}" that is a function`
        : 'a default export or an export named "handler" that is a function (args, ctx) => result';
    throw new BatonError('INVALID_INPUT', `${path} has no handler: expected ${expected}`, {
      data: { path, ...(exportName !== undefined ? { export: exportName } : {}) },
    });
  }
  return handler as LoadedHandler;
}
