/**
 * Where `../shared` (protocols and third-party conformance data) is. It sits beside the project
 * root; BATON_SHARED_DIR overrides. Tests that need it fail with this message rather than skip.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const candidates = [
  process.env.BATON_SHARED_DIR,
  resolve(import.meta.dirname, '..', '..', 'shared'),
  '/work/shared',
].filter((p): p is string => typeof p === 'string' && p.length > 0);

export function sharedDir(): string {
  const found = candidates.find((p) => existsSync(resolve(p, 'conformance')));
  if (!found)
    throw new Error(
      `conformance data not found: looked for a "shared" folder with conformance/ in ${candidates.join(', ')}; set BATON_SHARED_DIR`,
    );
  return found;
}

export function conformancePath(...parts: string[]): string {
  return resolve(sharedDir(), 'conformance', ...parts);
}
