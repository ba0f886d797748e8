/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, its CLI as a child process) against
 * baton/mcp on a real socket, for the scenarios that cover what Baton serves: the handshake, ping,
 * tools/list, logging/setLevel, concurrent SSE streams, and DNS-rebinding protection. (The
 * tools-call-* scenarios need the suite's own fixture tools, resources and prompts Baton does not
 * have.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type Baton, createBaton, defineTask } from '../src/index.ts';
import { type McpHttpHandler, mountMcp } from '../src/mcp/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-conformance-'));
let baton: Baton;
let server: HttpServer;
let mcp: McpHttpHandler;

beforeAll(async () => {
  const add = defineTask({
    name: 'add',
    input: z.object({ a: z.number(), b: z.number() }),
    run: async ({ a, b }) => ({ sum: a + b }),
  });
  baton = createBaton({ store: join(dir, 'c.db'), tasks: [add] });
  server = await serveHttp(baton, { port: 0 });
  mcp = mountMcp(server.handler, baton, { allowedHosts: ['localhost', '127.0.0.1', '[::1]'] });
});
afterAll(async () => {
  await mcp.close();
  await server.close();
  await baton.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);

const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'logging-set-level',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

it.each(SCENARIOS)('passes the conformance scenario %s', async (scenario) => {
  // Asynchronously: the server under test runs in this process's event loop.
  const r = await new Promise<{ out: string }>((resolve) => {
    execFile(
      process.execPath,
      [cli, 'server', '--url', `${server.url}/mcp`, '--scenario', scenario],
      { encoding: 'utf8', timeout: 120_000 },
      (_err, stdout, stderr) => resolve({ out: `${stdout}\n${stderr}` }),
    );
  });
  const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(r.out);
  expect(summary, r.out).not.toBeNull();
  expect(summary?.[3], r.out).toBe('0');
  expect(summary?.[1]).toBe(summary?.[2]);
});
