import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The tsx loader as an absolute URL, so child processes can run TypeScript from any cwd. */
export const TSX_LOADER = pathToFileURL(
  join(import.meta.dirname, '..', 'node_modules', 'tsx', 'dist', 'loader.mjs'),
).href;
