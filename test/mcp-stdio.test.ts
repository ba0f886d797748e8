/**
 * examples/mcp as written: the SDK's real client starts `baton mcp` as a subprocess and talks to
 * it over stdio — progress from checkpoints, partial findings and a run id when the reply window
 * closes, baton_resume until the result (no source read twice), a scheduled tool acknowledged.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { sqliteDriver } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const { Database } = sqliteDriver();

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-stdio-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runs the MCP example over stdio: timeout with partial findings, resume, result, schedule', () => {
  const db = join(dir, 'mcp.db');
  const r = spawnSync(
    process.execPath,
    ['--import', TSX_LOADER, join(root, 'examples/mcp/client.ts'), '--db', db],
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^tools: image_draw, research, baton_status, baton_resume, baton_decide$/m);
  expect(r.stdout).toMatch(/progress 17%: checkpoint 1, 16\.67% done, 1 items, on_track/);
  expect(r.stdout).toMatch(/still running: [1-5] finding\(s\) so far; resuming run run_\w+/);
  expect(r.stdout).toMatch(
    /research succeeded: \{"topic":"durable agents","report":"6 sources read on durable agents"\}/,
  );
  expect(r.stdout).toMatch(/image_draw scheduled: delivered at \d{4}-\d\d-\d\dT[\d:.]+Z \(run run_\w+\)/);
  // A resumed call reports only what happens after it: checkpoint 1 is announced once.
  expect(r.stdout.match(/checkpoint 1,/g)).toHaveLength(1);
  // Every source was read once, across the calls (memoized steps).
  const d = new Database(db, { readonly: true });
  const steps = d.prepare("SELECT count(*) FROM steps WHERE key LIKE 'source-%'").pluck().get();
  d.close();
  expect(steps).toBe(6);
});
