/**
 * Every code block of README.md, as written (issue 12 item 8). A block either runs here, or the
 * HTML comment right above it says why not: `<!-- readme:skip <reason> -->` (a fragment, or it
 * needs a server), or `<!-- example:<name> -->` (a dedicated test runs it, and must say so).
 * TypeScript blocks are type-checked together under the project's strict settings (`from 'baton'`
 * pointed at the source), then each runs in a fresh directory, so `./baton.db` is a new SQLite file.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = join(root, '.tmp', `readme-blocks-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Block {
  line: number;
  lang: string;
  code: string;
  /** The HTML comment directly above the fence (blank lines allowed), if any. */
  marker: string | undefined;
}

function readmeBlocks(): Block[] {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    let above = i - 1;
    while (above >= 0 && (lines[above] ?? '').trim() === '') above--;
    const comment = /^<!--\s*(.*?)\s*-->$/.exec((lines[above] ?? '').trim());
    blocks.push({
      line: i + 1,
      lang: open[1] ?? '',
      code: lines.slice(i + 1, end).join('\n'),
      marker: comment?.[1],
    });
    i = end;
  }
  return blocks;
}

const blocks = readmeBlocks();
const runnable = blocks.filter((b) => b.marker === undefined);

/** `from 'baton'` and `from 'baton/<sub>'` pointed at the source, as the package exports map them. */
function toSource(code: string): string {
  const exportsMap = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports as Record<
    string,
    { types?: string }
  >;
  return code.replace(/from '(baton(?:\/[\w-]+)?)'/g, (whole, spec: string) => {
    const key = spec === 'baton' ? '.' : `./${spec.slice('baton/'.length)}`;
    const types = exportsMap[key]?.types;
    if (!types) return whole;
    const file = types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts');
    // An absolute path: tsc resolves it, and Node's ESM loader reads it as a file URL.
    return `from '${join(root, file)}'`;
  });
}

describe('README code blocks', () => {
  it('are each run here, or marked with the reason they are not', () => {
    expect(blocks.length).toBeGreaterThan(10);
    for (const b of blocks) {
      if (b.marker === undefined) {
        expect(['ts', 'sh'], `line ${b.line}: a block of ${b.lang || 'no language'}`).toContain(b.lang);
        continue;
      }
      const skip = /^readme:skip\s+(\S.{9,})$/.exec(b.marker);
      const example = /^example:([\w-]+)$/.exec(b.marker);
      expect(
        skip || example,
        `line ${b.line}: "${b.marker}" is neither readme:skip <reason> nor example:<name>`,
      ).toBeTruthy();
      if (example) {
        // The test that runs it reads the same marker.
        const tests = readdirSync(join(root, 'test')).filter((f) => f.endsWith('.test.ts'));
        const runner = tests.find((f) =>
          readFileSync(join(root, 'test', f), 'utf8').includes(`example:${example[1]}`),
        );
        expect(runner, `line ${b.line}: no test runs example:${example[1]}`).toBeDefined();
      }
    }
  });

  const ts = runnable.filter((b) => b.lang === 'ts');
  it('type-check under the project settings (strict), as written', () => {
    mkdirSync(dir, { recursive: true });
    for (const b of ts) writeFileSync(join(dir, `block-${b.line}.ts`), `${toSource(b.code)}\nexport {};\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          rewriteRelativeImportExtensions: false,
          rootDir: root,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: root,
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 300_000);

  it.each(ts.map((b) => [b.line, b] as const))(
    'runs the TypeScript block at line %i',
    (line, b) => {
      const cwd = join(dir, `run-${line}`);
      mkdirSync(cwd, { recursive: true });
      const file = join(cwd, 'block.ts');
      writeFileSync(file, `${toSource(b.code)}\nexport {};\n`);
      const r = spawnSync(process.execPath, ['--import', TSX_LOADER, file], {
        cwd,
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      expect(r.stderr.replace(/npm warn[^\n]*\n/g, ''), `line ${line}`).not.toMatch(/Error/);
      expect(r.status, `line ${line}: ${r.stderr}`).toBe(0);
      expect(readdirSync(cwd)).toContain('baton.db');
    },
    180_000,
  );

  it.each(runnable.filter((b) => b.lang === 'sh').map((b) => [b.line, b] as const))(
    'runs the shell block at line %i',
    (line, b) => {
      const r = spawnSync('bash', ['-euo', 'pipefail', '-c', b.code], {
        cwd: root,
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      expect(r.status, `line ${line}: ${r.stderr}`).toBe(0);
    },
    180_000,
  );
});
