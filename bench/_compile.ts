/** How the benchmark's child processes load its TypeScript: as `npm run bench` does (see _loader.mjs). */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const BENCH_LOADER = pathToFileURL(join(import.meta.dirname, '_register.mjs')).href;
