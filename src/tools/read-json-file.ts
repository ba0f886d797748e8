import { readFileSync, statSync } from 'node:fs';
import { BatonError } from '../core/index.ts';

/**
 * Reads a JSON file and, when it is malformed, says where: `config.json:4:7`. V8's own message
 * gives a position only for some errors (and the format changes across Node versions), so the
 * place is found by a small scanner of our own; V8's message supplies the reason.
 */

/** A config file larger than this is a mistake, not a tool definition. */
const MAX_BYTES = 1024 * 1024;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Stop {
  constructor(readonly offset: number) {}
}

/** Offset of the first character where `text` stops being JSON, or -1 when it is JSON. */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const n = text.length;
  const space = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const expect = (ok: boolean) => {
    if (!ok) throw new Stop(i);
  };
  const literal = (word: string) => {
    for (const ch of word) {
      expect(text[i] === ch);
      i++;
    }
  };
  const string = () => {
    i++;
    for (;;) {
      expect(i < n);
      const ch = text.charCodeAt(i);
      if (ch === 0x22) {
        i++;
        return;
      }
      expect(ch >= 0x20);
      if (ch === 0x5c) {
        i++;
        if (text[i] === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            expect(/[0-9a-fA-F]/.test(text[i] ?? ''));
          }
        } else expect('"\\/bfnrt'.includes(text[i] ?? 'x'));
      }
      i++;
    }
  };
  const number = () => {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    expect(m !== null);
    i += (m as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    space();
    const ch = text[i];
    if (ch === '{') members('}', true);
    else if (ch === '[') members(']', false);
    else if (ch === '"') string();
    else if (ch === 't') literal('true');
    else if (ch === 'f') literal('false');
    else if (ch === 'n') literal('null');
    else number();
  };
  const members = (close: string, keyed: boolean) => {
    i++;
    space();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      if (keyed) {
        space();
        expect(text[i] === '"');
        string();
        space();
        expect(text[i] === ':');
        i++;
      }
      value();
      space();
      if (text[i] === close) {
        i++;
        return;
      }
      expect(text[i] === ',');
      i++;
    }
  };
  try {
    value();
    space();
    expect(i === n);
    return -1;
  } catch (err) {
    if (err instanceof Stop) return err.offset;
    throw err;
  }
}

/** 1-based line and column of `offset`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ \(line \d+ column \d+\)$/, '');
}

/** Parses `text` from `file`; malformed JSON → INVALID_INPUT naming `file:line:column`. */
export function parseJsonText(text: string, file: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    const found = jsonErrorOffset(body);
    const offset = found < 0 ? 0 : found;
    const { line, column } = lineColumn(body, offset);
    const hint =
      body[offset] === '/'
        ? '; comments (// or /* */) are not allowed in JSON (the protocol sample uses them only as placeholders)'
        : '';
    throw new BatonError(
      'INVALID_INPUT',
      `${file}:${line}:${column}: not valid JSON (${reasonOf(err)})${hint}`,
      { cause: err, data: { file, line, column, position: offset } },
    );
  }
}

/** Reads and parses a JSON file, refusing one that is missing, not a file, or over 1 MiB. */
export function readJsonFile(file: string): unknown {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new Error('not a regular file');
    size = stat.size;
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
      data: { file },
    });
  }
  if (size > MAX_BYTES)
    throw new BatonError(
      'INVALID_INPUT',
      `${file} is ${size} bytes; a tool config must be at most ${MAX_BYTES}`,
      {
        data: { file, size },
      },
    );
  return parseJsonText(readFileSync(file, 'utf8'), file);
}
