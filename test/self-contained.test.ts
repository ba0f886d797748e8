/**
 * A clone stands on its own: nothing in the project reads a path outside the repository, and the
 * tests that read third-party data pass from a copy of the checkout with the original checkout and
 * any `shared` folder beside it hidden (in a private mount namespace, where the machine allows one).
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '..');
const SELF = 'test/self-contained.test.ts';

function checkoutFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO })
    .toString()
    .split('\0')
    .filter((f) => f.length > 0 && existsSync(join(REPO, f)));
}

// Built from pieces so that this file does not match itself.
const OUTSIDE = [
  new RegExp(['\\.\\.', 'shared'].join('/')),
  new RegExp(`['"\`](/${['work', 'home', 'root', 'Users'].join('|/')})/`),
  new RegExp(['BATON', 'SHARED', 'DIR'].join('_')),
];

describe('the project reads nothing outside the repository', () => {
  it('no file in src, test, bench or examples names a path outside it', () => {
    const offenders: string[] = [];
    for (const file of checkoutFiles()) {
      if (!/^(src|test|bench|examples)\//.test(file) || file === SELF) continue;
      if (file.startsWith('test/conformance/')) continue; // third-party data, kept byte for byte
      const lines = readFileSync(join(REPO, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (OUTSIDE.some((re) => re.test(line))) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  describe('from a copy of the checkout with the original hidden', () => {
    const work = mkdtempSync(join(tmpdir(), 'baton-alone-'));
    afterAll(() => rm(work, { recursive: true, force: true }), 300_000);

    it('passes the conformance tests (JSONPath, date-time)', async () => {
      const copy = join(work, 'baton');
      for (const file of checkoutFiles()) {
        mkdirSync(dirname(join(copy, file)), { recursive: true });
        cpSync(join(REPO, file), join(copy, file));
      }
      // Hard links where the file system allows: cheap, and still reachable once the original is hidden.
      try {
        execFileSync('cp', ['-al', join(REPO, 'node_modules'), join(copy, 'node_modules')]);
      } catch {
        cpSync(join(REPO, 'node_modules'), join(copy, 'node_modules'), {
          recursive: true,
          verbatimSymlinks: true,
        });
      }
      const vitest = [
        process.execPath,
        join(copy, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--project',
        'fast',
        'src/refs/jsonpath-cts.test.ts',
        'src/schedule/conformance.test.ts',
      ];
      const hide = [REPO, join(dirname(REPO), 'shared')].filter((p) => existsSync(p) && !copy.startsWith(p));
      const mounts = hide.map((p) => `mount -t tmpfs none '${p}'`).join(' && ');
      const quoted = vitest.map((a) => `'${a}'`).join(' ');
      let hidden = false;
      try {
        execFileSync('unshare', ['-m', 'sh', '-c', `${mounts} && test ! -e '${join(REPO, 'package.json')}'`]);
        hidden = true;
      } catch {
        console.warn(
          'self-contained: no private mount namespace here; the copy runs with the original visible',
        );
      }
      const { stdout } = hidden
        ? await run('unshare', ['-m', 'sh', '-c', `${mounts} && cd '${copy}' && ${quoted}`], { cwd: copy })
        : await run(vitest[0] as string, vitest.slice(1), { cwd: copy });
      const plain = stdout.replace(/\x1b\[[0-9;]*m/g, '');
      expect(plain).toMatch(/Test Files\s+2 passed \(2\)/);
    }, 180_000);
  });
});
