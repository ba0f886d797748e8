/**
 * The integrations are subpath exports with optional peer dependencies: `import 'baton'` must load
 * none of them, nor their peers, so a user without LangGraph, MCP or OpenTelemetry pays nothing.
 * Nor the heavy dependencies Baton itself uses (issue 15 item 4): they load on first use.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

function loadedBy(entry: string): string[] {
  const script = `
    const { createRequire } = await import('node:module');
    await import(process.argv[1]);
    await new Promise((r) => setTimeout(r, 50)); // let the hook thread's last messages arrive
    // ESM imports reach the resolve hook; CommonJS require() calls (onFirstUse) fill require.cache.
    const required = Object.keys(createRequire(import.meta.url).cache).map((p) => 'file://' + p);
    console.log(JSON.stringify([...globalThis.__loadedUrls, ...required]));`;
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      resolve(root, 'test/fixtures/record-loads.mjs'),
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
      entry,
    ],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as string[];
}

const PEERS = /node_modules\/(@langchain|@modelcontextprotocol|@opentelemetry\/sdk-)/;
const INTEGRATIONS = /\/src\/(langgraph|mcp|ai-sdk|otel)\//;
// zod (~95 modules) and luxon (262 kB): loaded on first parse (deps/zod.ts, schedule/luxon.ts).
const HEAVY =
  /node_modules\/(zod|luxon|pino|ajv|json-p3|better-sqlite3|pg|gpt-tokenizer|pdfjs-dist|lunar-javascript|ai|@ai-sdk\/[^/]+)\//;

describe('importing baton', () => {
  it('loads no integration and none of their optional peers', () => {
    const urls = loadedBy(resolve(root, 'src/index.ts'));
    expect(urls.length).toBeGreaterThan(50); // the hook saw the import graph
    expect(urls.filter((u) => PEERS.test(u) || INTEGRATIONS.test(u))).toEqual([]);
  });

  it('loads none of the heavy dependencies until they are used', () => {
    const urls = loadedBy(resolve(root, 'src/index.ts'));
    const heavy = urls.filter((u) => HEAVY.test(u));
    expect([...new Set(heavy.map((u) => HEAVY.exec(u)?.[1]))]).toEqual([]);
  });

  it("loads the context planner (token counting, transfer tables) only when a step's references are planned", () => {
    const urls = loadedBy(resolve(root, 'src/index.ts'));
    expect(urls.filter((u) => /\/src\/context\//.test(u))).toEqual([]);
  });

  it('the probe sees a dependency loaded with require() on first use', () => {
    const urls = loadedBy(resolve(root, 'src/store/sqlite/index.ts'));
    expect(urls.some((u) => HEAVY.test(u))).toBe(false);
    const script = resolve(root, 'test/fixtures/open-sqlite.ts');
    expect(loadedBy(script).some((u) => u.includes('node_modules/better-sqlite3/'))).toBe(true);
  });

  it('a worker running a plain task loads no JSONPath engine nor, logging nothing, pino (a restarted worker pays for each module)', () => {
    const urls = loadedBy(resolve(root, 'test/fixtures/start-worker.ts'));
    expect(urls.some((u) => u.includes('node_modules/better-sqlite3/'))).toBe(true);
    expect(urls.filter((u) => /node_modules\/(json-p3|pino)\//.test(u))).toEqual([]);
  });

  it('the langgraph subpath loads its peers (the probe can see them)', () => {
    const urls = loadedBy(resolve(root, 'src/langgraph/index.ts'));
    expect(urls.some((u) => u.includes('node_modules/@langchain/langgraph-checkpoint/'))).toBe(true);
  });
});
