import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatonError, type ErrorCode } from '../core/index.ts';
import type { TaskContext } from '../runtime/index.ts';
import { SCHEDULE_JSON_SCHEMA } from '../schedule/index.ts';
import { loadToolConfig, loadToolsDir, readToolConfig } from './index.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const ctx = { signal: new AbortController().signal } as TaskContext;

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'baton-tools-'));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

async function rejection(p: unknown, code: ErrorCode): Promise<BatonError> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof BatonError)) throw err;
    expect(err.code, err.message).toBe(code);
    return err;
  }
  throw new Error('expected a rejection');
}

/** Writes a tool folder `<dir>/<folder>` with a config.json and, unless null, an index.mjs. */
function writeTool(
  dir: string,
  folder: string,
  config: unknown,
  handler: string | null = 'export default (a) => a;',
) {
  mkdirSync(join(dir, folder), { recursive: true });
  writeFileSync(
    join(dir, folder, 'config.json'),
    typeof config === 'string' ? config : JSON.stringify(config),
  );
  if (handler !== null) writeFileSync(join(dir, folder, 'index.mjs'), handler);
}

const plain = (name: string) => ({
  name,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
});

describe('the fixtures', () => {
  it('image_draw declares the protocol’s schedule property; repo_info does not', () => {
    const { config } = readToolConfig(join(FIXTURES, 'image_draw'));
    expect((config.inputSchema.properties as Record<string, unknown>).schedule).toEqual(SCHEDULE_JSON_SCHEMA);
    const repo = readToolConfig(join(FIXTURES, 'repo_info', 'config.json')).config;
    expect(Object.keys(repo.inputSchema.properties as object)).not.toContain('schedule');
  });

  it('loads the fixtures folder: a TypeScript handler through tsx and a JavaScript one', async () => {
    const tools = await loadToolsDir(FIXTURES);
    expect(tools.map((t) => [t.name, t.tool.acceptsSchedule])).toEqual([
      ['image_draw', true],
      ['repo_info', false],
    ]);
    const [draw, repo] = tools as [(typeof tools)[number], (typeof tools)[number]];
    const drawn = (await draw.run({ prompt: 'a cat', schedule: 'in 2 minutes' }, ctx)) as Record<
      string,
      unknown
    >;
    expect(drawn.image).toMatch(/^image:\/\/image_draw\/[0-9a-f]{12}\.png$/);
    expect(drawn.args).toEqual({ prompt: 'a cat' });
    expect(await repo.run({ owner: 'nodejs', repo: 'node', fields: ['license'] }, ctx)).toEqual({
      found: true,
      repository: 'nodejs/node',
      license: 'MIT',
    });
  });

  it('loads one tool from its folder with a handler function or a module', async () => {
    const byFunction = await loadToolConfig(join(FIXTURES, 'repo_info'), (args) => ({ echo: args }));
    expect(await byFunction.run({ owner: 'a', repo: 'b' }, ctx)).toEqual({ echo: { owner: 'a', repo: 'b' } });
    const byModule = await loadToolConfig(join(FIXTURES, 'repo_info', 'config.json'), {
      module: './index.mjs',
      export: 'handler',
    });
    expect(await byModule.run({ owner: 'x', repo: 'y' }, ctx)).toEqual({ found: false, repository: 'x/y' });
  });
});

describe('config.json', () => {
  it('refuses the protocol sample as written: comments are not JSON, and the error says where', async () => {
    const sample = readFileSync(join(FIXTURES, 'image_draw', 'config.json'), 'utf8').replace(
      '"properties": {\n      "prompt"',
      '"properties": {\n      // ... 其他参数\n      "prompt"',
    );
    writeTool(tmp, 'commented', sample);
    const file = join(tmp, 'commented', 'config.json');
    const err = await rejection(
      loadToolConfig(join(tmp, 'commented'), () => 1),
      'INVALID_INPUT',
    );
    expect(err.message.startsWith(`${file}:7:7: not valid JSON (`)).toBe(true);
    expect(err.message).toContain('comments (// or /* */) are not allowed in JSON');
    expect(err.data).toMatchObject({ file, line: 7, column: 7 });
  });

  it('places other syntax errors: a trailing comma, a missing colon, a cut-off file', async () => {
    const cases: ReadonlyArray<[string, number, number]> = [
      ['{\n  "name": "a",\n}', 3, 1],
      ['{ "name" "a" }', 1, 10],
      ['{\n  "name": "a",\n  "inputSchema": {', 3, 19],
      ['{ "name": tru }', 1, 14],
      ['', 1, 1],
    ];
    for (const [text, line, column] of cases) {
      writeFileSync(join(tmp, 'config.json'), text);
      const err = await rejection(
        loadToolConfig(tmp, () => 1),
        'INVALID_INPUT',
      );
      expect([err.data.line, err.data.column], text).toEqual([line, column]);
      expect(err.message).toContain(`config.json:${line}:${column}: not valid JSON`);
    }
  });

  it('checks the shape and names the file and the key', async () => {
    const cases: ReadonlyArray<[unknown, string]> = [
      [[1], 'the config must be a JSON object'],
      [{ inputSchema: {} }, 'name must be'],
      [{ name: '../escape', inputSchema: {} }, 'name must be'],
      [{ name: 'a/b', inputSchema: {} }, 'name must be'],
      [{ name: 'ok', description: 3, inputSchema: {} }, 'description must be a string'],
      [{ name: 'ok', inputSchema: 'object' }, 'inputSchema must be a JSON Schema object'],
      [{ name: 'ok', inputSchema: {}, timeoutMs: -5 }, 'timeoutMs must be a positive number'],
    ];
    const file = join(tmp, 'config.json');
    for (const [config, message] of cases) {
      writeFileSync(file, JSON.stringify(config));
      const err = await rejection(
        loadToolConfig(file, () => 1),
        'INVALID_INPUT',
      );
      expect(err.message, message).toContain(`${file}: ${message}`);
    }
  });

  it('puts the file in front of a schema error from defineTool', async () => {
    writeTool(tmp, 'bad', {
      name: 'bad',
      inputSchema: { type: 'object', properties: { a: { type: 'strin' } } },
    });
    const err = await rejection(
      loadToolConfig(join(tmp, 'bad'), () => 1),
      'INVALID_OPTION',
    );
    expect(err.message).toContain(
      `${join(tmp, 'bad', 'config.json')}: tool "bad".inputSchema must be a valid JSON Schema`,
    );
  });

  it('uses the config’s timeoutMs as the task timeout unless the code sets one', async () => {
    writeTool(tmp, 't', { ...plain('t'), timeoutMs: 45_000 });
    expect((await loadToolConfig(join(tmp, 't'), () => 1)).policy({}).baseTimeoutMs).toBe(45_000);
    const coded = await loadToolConfig(join(tmp, 't'), () => 1, { timeout: '10s' });
    expect(coded.policy({}).baseTimeoutMs).toBe(10_000);
  });

  it('refuses a handler module outside the tool’s folder, and a module without a handler', async () => {
    writeTool(tmp, 't', plain('t'), 'export const other = 1;');
    writeFileSync(join(tmp, 'outside.mjs'), 'export default () => "escaped";');
    const escaped = await rejection(
      loadToolConfig(join(tmp, 't'), { module: '../outside.mjs' }),
      'INVALID_INPUT',
    );
    expect(escaped.message).toContain('path traversal is refused');
    const none = await rejection(loadToolConfig(join(tmp, 't'), { module: './index.mjs' }), 'INVALID_INPUT');
    expect(none.message).toContain('has no handler: expected a default export or an export named "handler"');
    await rejection(loadToolConfig(join(tmp, 't'), { module: 3 } as never), 'INVALID_OPTION');
  });
});

describe('loadToolsDir', () => {
  it('skips folders without a config.json, hidden folders and files', async () => {
    writeTool(tmp, 'b_tool', plain('b_tool'));
    writeTool(tmp, 'a_tool', plain('a_tool'), 'export function handler(a) { return { got: a }; }');
    writeTool(tmp, '.hidden', plain('hidden'));
    mkdirSync(join(tmp, 'shared'));
    writeFileSync(join(tmp, 'README.md'), '# tools');
    const tools = await loadToolsDir(tmp);
    expect(tools.map((t) => t.name)).toEqual(['a_tool', 'b_tool']);
    expect(await tools[0]?.run({ q: 'x' }, ctx)).toEqual({ got: { q: 'x' } });
  });

  it('passes task options to every tool or per name', async () => {
    writeTool(tmp, 'a', plain('a'));
    writeTool(tmp, 'b', plain('b'));
    const tools = await loadToolsDir(tmp, {
      taskOptions: (name) => (name === 'a' ? { timeout: '30s', retry: { maxRetries: 2 } } : undefined),
    });
    expect(tools.map((t) => [t.policy({}).baseTimeoutMs, t.policy({}).maxRetries])).toEqual([
      [30_000, 2],
      [2_880_000, 0],
    ]);
  });

  it('refuses a tool folder or a handler that leaves the folder through a symlink', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'baton-outside-'));
    try {
      writeTool(outside, 'evil', plain('evil'));
      symlinkSync(join(outside, 'evil'), join(tmp, 'evil'));
      const err = await rejection(loadToolsDir(tmp), 'INVALID_INPUT');
      expect(err.message).toContain(`tool folder ${join(tmp, 'evil')} leaves`);
      rmSync(join(tmp, 'evil'));
      writeTool(tmp, 'sneaky', plain('sneaky'), null);
      symlinkSync(join(outside, 'evil', 'index.mjs'), join(tmp, 'sneaky', 'index.mjs'));
      expect((await rejection(loadToolsDir(tmp), 'INVALID_INPUT')).message).toContain(
        'path traversal is refused',
      );
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('refuses two tools with one name, a tool without a handler, and a missing folder', async () => {
    writeTool(tmp, 'one', plain('same'));
    writeTool(tmp, 'two', plain('same'));
    expect((await rejection(loadToolsDir(tmp), 'INVALID_INPUT')).message).toContain(
      'tool "same" is also defined in',
    );
    rmSync(join(tmp, 'two'), { recursive: true });
    writeTool(tmp, 'three', plain('three'), null);
    expect((await rejection(loadToolsDir(tmp), 'INVALID_INPUT')).message).toContain(
      'has no handler: expected index.ts, index.js, index.mjs',
    );
    await rejection(loadToolsDir(join(tmp, 'missing')), 'INVALID_INPUT');
  });
});
