import { join } from 'node:path';
import { DateTime } from 'luxon';
import { beforeAll, describe, expect, it } from 'vitest';
import { BatonError, type ErrorCode, type ValidationError } from '../core/index.ts';
import { SCHEDULE_JSON_SCHEMA } from '../schedule/index.ts';
import { defineTool, loadToolConfig, prepareToolArgs, type ToolDefinition } from './index.ts';

const SH = 'Asia/Shanghai';
/** Thursday 2026-03-05 14:30 in Shanghai. */
const NOW = DateTime.fromISO('2026-03-05T14:30:00', { zone: SH }).toMillis();
const OPTIONS = { now: NOW, defaultTimezone: SH };
const FIXTURES = join(import.meta.dirname, 'fixtures');
const wall = (ms: number) => DateTime.fromMillis(ms, { zone: SH }).toFormat('yyyy-MM-dd HH:mm:ss');

let imageDraw: ToolDefinition;
let repoInfo: ToolDefinition;
beforeAll(async () => {
  imageDraw = await loadToolConfig(join(FIXTURES, 'image_draw'), () => 'drawn');
  repoInfo = await loadToolConfig(join(FIXTURES, 'repo_info', 'config.json'), () => 'info');
});

function failure(fn: () => unknown): BatonError {
  try {
    fn();
  } catch (err) {
    if (err instanceof BatonError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

function expectCode(fn: () => unknown, code: ErrorCode, field?: string): BatonError {
  const err = failure(fn);
  expect(err.code, err.message).toBe(code);
  if (field !== undefined) expect((err as ValidationError).field).toBe(field);
  return err;
}

describe('prepareToolArgs: the protocol forms', () => {
  const strings: ReadonlyArray<[string, string, number]> = [
    ['in 2 minutes', '2026-03-05 14:32:00', 120_000],
    ['2分钟后', '2026-03-05 14:32:00', 120_000],
    ['5分钟后', '2026-03-05 14:35:00', 300_000],
    ['明天早上9点', '2026-03-06 09:00:00', 66_600_000],
    ['2026-03-05T15:00:00+08:00', '2026-03-05 15:00:00', 1_800_000],
  ];
  for (const [text, at, delayMs] of strings)
    it(`reads "${text}" and hands back the arguments without schedule`, () => {
      const args = { prompt: '1girl, beautiful anime style', schedule: text };
      const prepared = prepareToolArgs(imageDraw, args, OPTIONS);
      expect(prepared.args).toEqual({ prompt: '1girl, beautiful anime style' });
      expect(wall(prepared.schedule?.at as number)).toBe(at);
      expect(prepared.schedule?.delayMs).toBe(delayMs);
      expect(prepared.schedule?.text).toBe(text);
      expect(args.schedule).toBe(text);
    });

  it('reads the object form with its own language and time zone', () => {
    const prepared = prepareToolArgs(
      imageDraw,
      { prompt: '...', schedule: { when: 'in 5 minutes', language: 'en', timezone: 'Europe/Berlin' } },
      OPTIONS,
    );
    expect(prepared.args).toEqual({ prompt: '...' });
    expect(prepared.schedule).toMatchObject({
      delayMs: 300_000,
      language: 'en',
      timezone: 'Europe/Berlin',
      iso: '2026-03-05T07:35:00.000+01:00',
    });
  });

  it('lets the caller’s time zone win over the object form’s', () => {
    const prepared = prepareToolArgs(
      imageDraw,
      { prompt: 'x', schedule: { when: 'tomorrow 9am', timezone: 'Europe/Berlin' } },
      { now: NOW, timezone: SH },
    );
    expect(prepared.schedule?.iso).toBe('2026-03-06T09:00:00.000+08:00');
  });

  it('reads the html_to_app sample: other arguments pass through untouched', () => {
    const htmlToApp = defineTool({
      name: 'html_to_app',
      inputSchema: {
        type: 'object',
        properties: {
          description: { type: 'string' },
          app_name: { type: 'string' },
          details: { type: 'string' },
          schedule: SCHEDULE_JSON_SCHEMA,
        },
        required: ['description', 'app_name'],
      },
      handler: () => null,
    });
    const args = { description: '创建一个计算器', app_name: 'calc', details: '...', schedule: '5分钟后' };
    const prepared = prepareToolArgs(htmlToApp, args, OPTIONS);
    expect(prepared.args).toEqual({ description: '创建一个计算器', app_name: 'calc', details: '...' });
    expect(prepared.schedule?.delayMs).toBe(300_000);
    expect(prepared.schedule?.language).toBe('zh');
  });

  it('gives no schedule when the call has none, on tools with and without the opt-in', () => {
    expect(prepareToolArgs(imageDraw, { prompt: 'x' }, OPTIONS)).toEqual({ args: { prompt: 'x' } });
    expect(prepareToolArgs(repoInfo, { owner: 'nodejs', repo: 'node' }, OPTIONS)).toEqual({
      args: { owner: 'nodejs', repo: 'node' },
    });
    // An explicit `schedule: undefined` (a JS caller's optional field) is no schedule.
    expect(prepareToolArgs(repoInfo, { owner: 'a', repo: 'b', schedule: undefined }, OPTIONS).schedule).toBe(
      undefined,
    );
  });
});

describe('prepareToolArgs: the bad inputs of the issue', () => {
  it('refuses an unparseable expression', () => {
    const err = expectCode(
      () => prepareToolArgs(imageDraw, { prompt: 'x', schedule: 'when pigs fly' }, OPTIONS),
      'TIME_EXPRESSION_INVALID',
      'schedule',
    );
    expect(err.message).toContain('in 2 minutes');
  });

  it('refuses an empty expression, as a string or as the object’s when', () => {
    expectCode(
      () => prepareToolArgs(imageDraw, { prompt: 'x', schedule: '' }, OPTIONS),
      'TIME_EXPRESSION_INVALID',
    );
    expectCode(
      () => prepareToolArgs(imageDraw, { prompt: 'x', schedule: '   ' }, OPTIONS),
      'TIME_EXPRESSION_INVALID',
    );
    expectCode(
      () => prepareToolArgs(imageDraw, { prompt: 'x', schedule: { when: '' } }, OPTIONS),
      'SCHEDULE_INVALID',
      'schedule.when',
    );
  });

  it('refuses a negative offset', () => {
    for (const text of ['-5 minutes', 'in -2 minutes', '-5分钟后'])
      expectCode(
        () => prepareToolArgs(imageDraw, { prompt: 'x', schedule: text }, OPTIONS),
        'TIME_EXPRESSION_INVALID',
      );
  });

  it('refuses a time beyond the horizon, the default year or the caller’s', () => {
    expectCode(
      () => prepareToolArgs(imageDraw, { prompt: 'x', schedule: 'in 2 years' }, OPTIONS),
      'SCHEDULE_BEYOND_HORIZON',
    );
    expectCode(
      () =>
        prepareToolArgs(
          imageDraw,
          { prompt: 'x', schedule: 'in 2 hours' },
          { ...OPTIONS, horizonMs: 3_600_000 },
        ),
      'SCHEDULE_BEYOND_HORIZON',
    );
  });

  it('refuses an unknown time zone, in the call or in the options', () => {
    expectCode(
      () =>
        prepareToolArgs(
          imageDraw,
          { prompt: 'x', schedule: { when: 'in 5 minutes', timezone: 'Mars/Olympus' } },
          OPTIONS,
        ),
      'TIMEZONE_INVALID',
      'schedule.timezone',
    );
    expectCode(
      () =>
        prepareToolArgs(
          imageDraw,
          { prompt: 'x', schedule: 'in 5 minutes' },
          { now: NOW, timezone: 'Nowhere' },
        ),
      'TIMEZONE_INVALID',
      'timezone',
    );
  });

  it('refuses a schedule on a tool that does not declare it, before reading it', () => {
    const err = expectCode(
      () => prepareToolArgs(repoInfo, { owner: 'a', repo: 'b', schedule: 'when pigs fly' }, OPTIONS),
      'SCHEDULE_NOT_SUPPORTED',
    );
    expect(err.message).toBe(
      'tool "repo_info" does not accept schedule; its config.json must declare the schedule parameter (inputSchema.properties.schedule)',
    );
    expect(err.data).toEqual({ tool: 'repo_info', field: 'args.schedule' });
  });

  it('refuses a schedule object of the wrong shape', () => {
    const shapes: ReadonlyArray<[unknown, string]> = [
      [{ at: 'in 5 minutes' }, 'schedule.at'],
      [{}, 'schedule.when'],
      [{ when: 'in 5 minutes', timzone: 'Asia/Shanghai' }, 'schedule.timzone'],
      [{ when: 5 }, 'schedule.when'],
      [{ when: 'in 5 minutes', language: 'fr' }, 'schedule.language'],
      [{ when: 'in 5 minutes', timezone: 8 }, 'schedule.timezone'],
      [['in 5 minutes'], 'schedule'],
      [42, 'schedule'],
      [null, 'schedule'],
    ];
    for (const [schedule, field] of shapes)
      expectCode(
        () => prepareToolArgs(imageDraw, { prompt: 'x', schedule }, OPTIONS),
        'SCHEDULE_INVALID',
        field,
      );
  });

  it('refuses arguments that are not an object, naming args', () => {
    for (const args of [null, [], 'prompt', undefined])
      expect(
        expectCode(() => prepareToolArgs(imageDraw, args, OPTIONS), 'INVALID_INPUT', 'args').message,
      ).toMatch(/^args must be an object of tool arguments/);
  });

  it('checks the other arguments against the schema, naming each field', () => {
    const err = expectCode(
      () => prepareToolArgs(repoInfo, { owner: 'a b', fields: ['stars', 'forks'], extra: 1 }, OPTIONS),
      'INVALID_INPUT',
    );
    expect(err.data.problems).toEqual(
      expect.arrayContaining([
        'args.repo must be given (a required argument)',
        'args.extra must be absent: not an argument of this tool; known: owner, repo, fields',
        'args.owner must match pattern "^[A-Za-z0-9_.-]+$", got "a b"',
        'args.fields[1] must be one of "stars", "language", "license", got "forks"',
      ]),
    );
    expectCode(() => prepareToolArgs(imageDraw, { schedule: 'in 2 minutes' }, OPTIONS), 'INVALID_INPUT');
  });
});
