/** Issue 12 item 7: `baton run --fast-mode` shows the protocol's warning once, and in --json output too. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-fast-'));
const tasks = join(import.meta.dirname, 'fixtures', 'tasks.ts');
const plan = join(dir, 'plan.json');
writeFileSync(
  plan,
  JSON.stringify({
    plan: {
      steps: [
        { aiName: 'double', draftArgs: { n: 1 } },
        { aiName: 'double', draftArgs: { n: 2 } },
      ],
    },
  }),
);

function baton(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...args], {
    cwd: dir,
    env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--fast-mode', () => {
  it('prints the warning once for a flow of two steps', () => {
    const r = baton('--db', join(dir, 'a.db'), 'run', plan, '--tasks', tasks, '--fast-mode');
    expect(r.code).toBe(0);
    expect(r.err.split('Fast mode: Research timeouts reduced by 50%').length - 1).toBe(1);
  });

  it('carries it in the --json result', () => {
    const r = baton('--db', join(dir, 'b.db'), '--json', 'run', plan, '--tasks', tasks, '--fast-mode');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      status: 'succeeded',
      warnings: [
        'Fast mode: Research timeouts reduced by 50%\nResearch quality may be lower. For thorough research, omit --fast-mode.',
      ],
    });
  });
});
