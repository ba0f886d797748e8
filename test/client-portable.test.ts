/**
 * The typed client runs wherever fetch does (browsers, edge runtimes), so nothing it imports at run
 * time may come from Node's built-in modules. Walks the client's import graph from its door.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
// Value imports and re-exports; `import type` / `export type` are erased and do not count.
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

function runtimeImports(entry: string): { files: string[]; external: Map<string, string> } {
  const seen = new Set<string>();
  const external = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] as string;
      if (spec.startsWith('.')) queue.push(join(dirname(file), spec));
      else external.set(spec, file.slice(ROOT.length + 1));
    }
  }
  return { files: [...seen], external };
}

describe('the typed client', () => {
  it('imports nothing from Node built-ins at run time', () => {
    const { files, external } = runtimeImports(join(ROOT, 'src', 'client', 'index.ts'));
    expect(files.length).toBeGreaterThan(3);
    const builtins = [...external].filter(([spec]) => spec.startsWith('node:'));
    expect(builtins).toEqual([]);
  });
});
