/**
 * The integrations are subpath exports with optional peer dependencies: `import 'baton'` must load
 * none of them, nor their peers, so a user without LangGraph, MCP or OpenTelemetry pays nothing.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

function loadedBy(entry: string): string[] {
  const script = `
    await import(process.argv[1]);
    await new Promise((r) => setTimeout(r, 50)); // let the hook thread's last messages arrive
    console.log(JSON.stringify([...globalThis.__loadedUrls]));`;
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

describe('importing baton', () => {
  it('loads no integration and none of their optional peers', () => {
    const urls = loadedBy(resolve(root, 'src/index.ts'));
    expect(urls.length).toBeGreaterThan(50); // the hook saw the import graph
    expect(urls.filter((u) => PEERS.test(u) || INTEGRATIONS.test(u))).toEqual([]);
  });

  it('the langgraph subpath loads its peers (the probe can see them)', () => {
    const urls = loadedBy(resolve(root, 'src/langgraph/index.ts'));
    expect(urls.some((u) => u.includes('node_modules/@langchain/langgraph-checkpoint/'))).toBe(true);
  });
});
