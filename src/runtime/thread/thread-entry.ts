/**
 * Where a task thread starts. From built JavaScript it is `thread-main.js`. From TypeScript sources
 * (or for a task module written in TypeScript) the thread first registers tsx's loader: on Node 20
 * a worker does not run `--import` preloads from its execArgv, and hooks registered in the main
 * thread do not reach it, so a small bootstrap module registers tsx and then imports the entry.
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BatonError, ValidationError } from '../../core/index.ts';

const TYPESCRIPT = /\.[cm]?tsx?$/;

/** A file URL for the `module` option: a file URL as is, an absolute path converted. */
export function toModuleUrl(module: unknown): string {
  if (typeof module === 'string' && module.startsWith('file:')) return module;
  if (typeof module === 'string' && isAbsolute(module)) return pathToFileURL(module).href;
  throw new ValidationError(
    'module',
    'a file URL or an absolute path (import.meta.url of the module that exports the task)',
    module,
    {
      code: 'INVALID_OPTION',
    },
  );
}

/** The URL to start a Worker on for a task in `moduleUrl`. */
export function threadEntry(moduleUrl: string, here: string = import.meta.url): URL {
  const fromSource = TYPESCRIPT.test(here);
  const main = new URL(`./thread-main.${fromSource ? 'ts' : 'js'}`, here);
  if (!fromSource && !TYPESCRIPT.test(new URL(moduleUrl).pathname)) return main;
  let api: string;
  try {
    api = import.meta.resolve('tsx/esm/api');
  } catch (err) {
    throw new BatonError(
      'INVALID_OPTION',
      `running TypeScript (${moduleUrl}) in a task thread needs the tsx package, which cannot be found`,
      {
        cause: err,
        data: { module: moduleUrl },
      },
    );
  }
  const bootstrap = `import { register } from ${JSON.stringify(api)};\nregister();\nawait import(${JSON.stringify(main.href)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`);
}
