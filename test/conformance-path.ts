/**
 * Where the third-party conformance data the tests read lives: `test/conformance/` in this
 * repository (see its README for sources and licences). Nothing outside the repository is read.
 */
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, 'conformance');

export function conformancePath(...parts: string[]): string {
  return resolve(ROOT, ...parts);
}
