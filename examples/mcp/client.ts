/**
 * An MCP client (the official SDK) talking to `baton mcp` over stdio, offline:
 *
 *   npx tsx examples/mcp/client.ts [--db ./mcp.db]
 *
 * It lists the tools, calls `research` with a 1 s reply window so the call answers with the partial
 * findings and a run id (printing the progress notifications from the run's checkpoints), continues
 * with `baton_resume` until the result, and asks `image_draw` for a delivery in 2 minutes.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const { values: args } = parseArgs({ options: { db: { type: 'string', default: './mcp.db' } } });
const root = join(import.meta.dirname, '..', '..');

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [
    '--import',
    'tsx',
    join(root, 'src/cli/main.ts'),
    'mcp',
    '--tasks',
    join(root, 'examples/mcp/tools.ts'),
    '--db',
    args.db,
    '--reply-within',
    '1s',
  ],
  cwd: root,
  env: { ...process.env, BATON_CLI_MAIN: '1' } as Record<string, string>,
  stderr: 'inherit',
});
const client = new Client({ name: 'baton-example', version: '1.0.0' });
await client.connect(transport);

const { tools } = await client.listTools();
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);

type Structured = {
  status: string;
  run_id?: string;
  findings?: unknown[];
  output?: unknown;
  deliver_at?: string;
};
const onprogress = (p: { progress: number; message?: string }) =>
  console.log(`  progress ${p.progress.toFixed(0)}%: ${p.message}`);

let result = await client.callTool({ name: 'research', arguments: { topic: 'durable agents' } }, undefined, {
  onprogress,
});
let s = result.structuredContent as Structured;
while (s.status === 'timeout') {
  console.log(`still running: ${s.findings?.length} finding(s) so far; resuming run ${s.run_id}`);
  result = await client.callTool({ name: 'baton_resume', arguments: { run_id: s.run_id } }, undefined, {
    onprogress,
  });
  s = result.structuredContent as Structured;
}
console.log(`research ${s.status}: ${JSON.stringify(s.output)}`);

const drawn = await client.callTool({
  name: 'image_draw',
  arguments: { prompt: 'a lighthouse', schedule: 'in 2 minutes' },
});
const d = drawn.structuredContent as Structured;
console.log(`image_draw ${d.status}: delivered at ${d.deliver_at} (run ${d.run_id})`);
await client.close();
