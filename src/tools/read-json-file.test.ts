import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonErrorOffset, lineColumn, parseJsonText } from './read-json-file.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');

/** Every one-character deletion and a few insertions at every place: most are broken JSON. */
function variants(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i++) {
    out.push(text.slice(0, i) + text.slice(i + 1));
    for (const c of ['/', ',', '"', '}', ']', 'x', '1', '\\', '\u0001'])
      out.push(text.slice(0, i) + c + text.slice(i));
  }
  return out;
}

describe('locating JSON syntax errors', () => {
  for (const tool of ['repo_info', 'image_draw'])
    it(`agrees with V8 on which mutations of ${tool}/config.json are JSON, and where they break`, () => {
      const base = readFileSync(join(FIXTURES, tool, 'config.json'), 'utf8');
      let positioned = 0;
      for (const text of variants(base)) {
        let message: string | undefined;
        try {
          JSON.parse(text);
        } catch (err) {
          message = (err as Error).message;
        }
        const offset = jsonErrorOffset(text);
        if (message === undefined) {
          expect(offset, text).toBe(-1);
          continue;
        }
        expect(offset, message).toBeGreaterThanOrEqual(0);
        const v8 = / at position (\d+)/.exec(message);
        if (v8) {
          positioned++;
          expect(offset, message).toBe(Number(v8[1]));
        }
      }
      expect(positioned).toBeGreaterThan(500);
    });

  it('counts lines and columns from 1', () => {
    expect(lineColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });

  it('reads a file with a byte-order mark', () => {
    expect(parseJsonText('\uFEFF{"a":1}', 'x.json')).toEqual({ a: 1 });
  });
});
