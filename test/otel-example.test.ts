/** examples/otel as written: prints the span tree of a run that timed out once and finished. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { TSX_LOADER } from './tsx-loader.ts';

it('prints the traced run: the caller’s trace, a timed-out attempt with its events, the retry', () => {
  const root = join(import.meta.dirname, '..');
  const r = spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, 'examples/otel/traced-run.ts')], {
    cwd: root,
    encoding: 'utf8',
    timeout: 90_000,
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^trace 4bf92f3577b34da6a3ce929d0e0e4736 \(parent 00f067aa0ba902b7/m);
  expect(r.stdout).toMatch(/^ {2}attempt 1 {2}20000 ms ERROR \(timed out after 20000 ms\)$/m);
  expect(r.stdout).toMatch(/· timeout \{"baton.timeout_ms":20000,"baton.findings":2\}/);
  expect(r.stdout).toMatch(/^ {2}wait timer {2}5000 ms$/m);
  expect(r.stdout).toMatch(/^ {2}attempt 2 {2}4000 ms$/m);
  expect(r.stdout.match(/execute_tool search/g)).toHaveLength(4);
});
