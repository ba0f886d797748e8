import { describe, expect, it } from 'vitest';
import { BatonError, type ErrorCode } from '../core/index.ts';
import { isTaskDefinition, type TaskContext } from '../runtime/index.ts';
import { SCHEDULE_JSON_SCHEMA } from '../schedule/index.ts';
import { defineTool, isTool } from './index.ts';

const ctx = {} as TaskContext;

function failure(fn: () => unknown): BatonError {
  try {
    fn();
  } catch (err) {
    if (err instanceof BatonError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

async function rejection(p: unknown): Promise<BatonError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof BatonError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

function expectCode(err: BatonError, code: ErrorCode): BatonError {
  expect(err.code, err.message).toBe(code);
  return err;
}

const drawSchema = {
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1 },
    size: { enum: ['512', '1024'] },
    tags: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
    schedule: SCHEDULE_JSON_SCHEMA,
  },
  required: ['prompt', 'schedule'],
  additionalProperties: false,
};

function drawTool(seen: unknown[] = []) {
  return defineTool({
    name: 'image_draw',
    description: 'draws',
    inputSchema: drawSchema,
    handler: (args: { prompt: string }) => {
      seen.push(args);
      return { drew: args.prompt };
    },
  });
}

describe('defineTool', () => {
  it('returns a frozen task definition that carries the tool metadata and still runs', async () => {
    const tool = drawTool();
    expect(isTaskDefinition(tool)).toBe(true);
    expect(isTool(tool)).toBe(true);
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.name).toBe('image_draw');
    expect(tool.tool).toEqual({
      name: 'image_draw',
      description: 'draws',
      inputSchema: drawSchema,
      acceptsSchedule: true,
    });
    expect(await tool.run({ prompt: 'a cat' }, ctx)).toEqual({ drew: 'a cat' });
    // `run` is a method of the definition, not bound to it: a copy of the function works too.
    const { run } = tool;
    expect(await run({ prompt: 'a dog' }, ctx)).toEqual({ drew: 'a dog' });
  });

  it('tells tools from plain tasks', () => {
    expect(isTool({ type: 'task', name: 'x', run: () => 1 })).toBe(false);
    expect(isTool(null)).toBe(false);
  });

  it('removes schedule before the handler sees the arguments, even when the schema requires it', async () => {
    const seen: unknown[] = [];
    const tool = drawTool(seen);
    const input = { prompt: 'a cat', schedule: { when: 'in 5 minutes', timezone: 'Asia/Shanghai' } };
    await tool.run(input, ctx);
    expect(seen).toEqual([{ prompt: 'a cat' }]);
    expect(input.schedule).toEqual({ when: 'in 5 minutes', timezone: 'Asia/Shanghai' });
  });

  it('refuses a schedule when the schema does not declare it', async () => {
    const tool = defineTool({
      name: 'repo_info',
      inputSchema: { type: 'object', properties: { repo: { type: 'string' } } },
      handler: () => 'ok',
    });
    expect(tool.tool.acceptsSchedule).toBe(false);
    const err = expectCode(
      await rejection(tool.run({ repo: 'a/b', schedule: 'in 2 minutes' }, ctx)),
      'SCHEDULE_NOT_SUPPORTED',
    );
    expect(err.message).toContain('tool "repo_info" does not accept schedule');
    expect(err.message).toContain('config.json must declare the schedule parameter');
  });

  it('names every failing field as args.<path> must be …, with all problems in data', async () => {
    const tool = drawTool();
    const err = expectCode(
      await rejection(
        tool.run({ size: 'huge', colour: 'red', tags: [{ name: 'a' }, { label: 3 }] } as never, ctx),
      ),
      'INVALID_INPUT',
    );
    const problems = err.data.problems as string[];
    expect(problems).toEqual(
      expect.arrayContaining([
        'args.prompt must be given (a required argument)',
        'args.size must be one of "512", "1024", got "huge"',
        'args.colour must be absent: not an argument of this tool; known: prompt, size, tags',
        'args.tags[1].name must be given (a required argument)',
      ]),
    );
    expect(problems).toHaveLength(4);
    expect(err.message).toContain('arguments of tool "image_draw" are invalid');
    for (const p of problems) expect(err.message).toContain(p);
  });

  it('says what type was expected and what came, and keeps Ajv wording for other keywords', () => {
    const tool = drawTool();
    const typeErr = failure(() => tool.checkArgs({ prompt: 3 }));
    expect(typeErr.data.problems).toEqual(['args.prompt must be a string, got 3']);
    const emptyErr = failure(() => tool.checkArgs({ prompt: '' }));
    expect(emptyErr.data.problems).toEqual(['args.prompt must NOT have fewer than 1 characters, got ""']);
  });

  it('quotes keys that are not identifiers and lists at most 20 problems', () => {
    const odd = defineTool({
      name: 'odd',
      inputSchema: {
        type: 'object',
        properties: { 'a b': { type: 'integer' }, list: { type: 'array', items: { type: 'number' } } },
      },
      handler: () => null,
    });
    expect(failure(() => odd.checkArgs({ 'a b': 1.5 })).data.problems).toEqual([
      'args["a b"] must be an integer, got 1.5',
    ]);
    const many = failure(() => odd.checkArgs({ list: Array.from({ length: 30 }, (_, i) => `x${i}`) }));
    const problems = many.data.problems as string[];
    expect(problems).toHaveLength(21);
    expect(problems[0]).toBe('args.list[0] must be a number, got "x0"');
    expect(problems[20]).toBe('and 10 more problems');
  });

  it('refuses arguments that are not an object, naming args', async () => {
    const tool = drawTool();
    for (const bad of [null, 'prompt', [1], 3]) {
      const err = expectCode(await rejection(tool.run(bad as never, ctx)), 'INVALID_INPUT');
      expect(err.message.startsWith('args must be an object of tool arguments')).toBe(true);
    }
  });

  it('does not retry unless asked: a tool timeout is delivered at once', () => {
    expect(drawTool().policy({}).maxRetries).toBe(0);
    const retried = defineTool({
      name: 'flaky',
      inputSchema: { type: 'object' },
      handler: () => 1,
      retry: { maxRetries: 1, backoff: ['5s'] },
      timeout: '60s',
    });
    expect(retried.policy({}).maxRetries).toBe(1);
    expect(retried.policy({}).baseTimeoutMs).toBe(60_000);
  });

  it('keeps its own frozen copy of the schema', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    const tool = defineTool({ name: 'copy', inputSchema: schema, handler: () => 1 });
    schema.properties.n.type = 'string';
    expect(tool.checkArgs({ n: 1 })).toEqual({ n: 1 });
    expect(tool.tool.inputSchema).toEqual({ type: 'object', properties: { n: { type: 'number' } } });
    expect(Object.isFrozen((tool.tool.inputSchema.properties as Record<string, object>).n)).toBe(true);
  });

  it('reads 2020-12 schemas by their $schema and refuses dialects it does not know', () => {
    const tuple = defineTool({
      name: 'tuple',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { at: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }] } },
      },
      handler: () => 1,
    });
    expect(failure(() => tuple.checkArgs({ at: [1, 'x'] })).data.problems).toEqual([
      'args.at[1] must be a number, got "x"',
    ]);
    const err = failure(() =>
      defineTool({
        name: 'old',
        inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
        handler: () => 1,
      }),
    );
    expect(err.code).toBe('INVALID_OPTION');
    expect(err.message).toMatch(/^tool "old"\.inputSchema\.\$schema must be a JSON Schema dialect/);
  });

  it('lets two tools use the same $id, each with its own schema', () => {
    const make = (name: string, type: string) =>
      defineTool({
        name,
        inputSchema: { $id: 'https://example.com/args.json', type: 'object', properties: { v: { type } } },
        handler: () => 1,
      });
    const a = make('a', 'string');
    const b = make('b', 'number');
    expect(a.checkArgs({ v: 'x' })).toEqual({ v: 'x' });
    expect(b.checkArgs({ v: 1 })).toEqual({ v: 1 });
    expect(failure(() => b.checkArgs({ v: 'x' })).data.problems).toEqual([
      'args.v must be a number, got "x"',
    ]);
  });

  it('refuses a bad definition at define time, naming the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'x/y' }, 'tool.name must be'],
      [{ name: '../up' }, 'tool.name must be'],
      [{ handler: 'nope' }, 'tool "t".handler must be a function'],
      [{ inputSchema: null }, 'tool "t".inputSchema must be a JSON Schema object'],
      [{ inputSchema: { type: 'string' } }, 'tool "t".inputSchema.type must be "object"'],
      [
        { inputSchema: { type: 'object', properties: { a: { type: 'strin' } } } },
        'tool "t".inputSchema must be a valid JSON Schema: schema is invalid',
      ],
      [
        { inputSchema: { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } } },
        'tool "t".inputSchema must be a valid JSON Schema: can\'t resolve reference',
      ],
      [{ input: {} }, 'tool "t".input must be absent'],
      [{ run: () => 1 }, 'tool "t".run must be absent'],
      [{ timeout: -1 }, 'task "t".timeout'],
    ];
    for (const [patch, message] of cases) {
      const options = { name: 't', inputSchema: { type: 'object' }, handler: () => 1, ...patch };
      const err = failure(() => defineTool(options as never));
      expect(err.code, message).toBe('INVALID_OPTION');
      expect(err.message, message).toContain(message);
    }
  });
});
