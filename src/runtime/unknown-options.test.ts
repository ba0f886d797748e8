/**
 * Typos are errors: every user-facing options object refuses a key it does not know, naming it and
 * the nearest known one, before anything is stored (a `timzone` was delivered in UTC, hours off).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError, normalizePlan } from '../core/index.ts';
import { parseSchedule } from '../schedule/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTool } from '../tools/index.ts';
import { createBaton } from './baton.ts';
import { defineFlow } from './define-flow.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
beforeEach(() => {
  rt = testRuntime();
});
afterEach(() => rt.dispose());

function refusal(fn: () => unknown): { code: string; message: string; field?: unknown } {
  try {
    fn();
  } catch (err) {
    if (isBatonError(err)) return { code: err.code, message: err.message, field: err.data.field };
    return { code: 'not a BatonError', message: String(err) };
  }
  return { code: 'accepted', message: '' };
}

async function refusalOf(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    if (isBatonError(err)) return { code: err.code, message: err.message, field: err.data.field };
    return { code: 'not a BatonError', message: String(err) };
  }
  return { code: 'accepted', message: '' };
}

const run = async () => 'ok';

describe('unknown keys are refused, named', () => {
  it('in a schedule object: timzone', () => {
    expect(
      refusal(() => parseSchedule({ when: 'in 2 minutes', timzone: 'Asia/Shanghai' }, { now: 0 })),
    ).toEqual({
      code: 'SCHEDULE_INVALID',
      field: 'schedule.timzone',
      message: expect.stringMatching(/^schedule\.timzone is not an option \(did you mean "timezone"\?\)/),
    });
  });

  it('when a tool is started with that schedule, and nothing is stored', async () => {
    const draw = defineTool({
      name: 'draw',
      inputSchema: {
        type: 'object',
        properties: { prompt: { type: 'string' }, schedule: {} },
      },
      handler: async () => 'image',
    });
    const before = await rt.store.countRuns();
    const r = await refusalOf(
      rt.baton.start(draw, { prompt: 'x', schedule: { when: 'in 2 minutes', timzone: 'Asia/Shanghai' } }),
    );
    expect(r).toMatchObject({ code: 'SCHEDULE_INVALID', field: 'schedule.timzone' });
    expect(await rt.store.countRuns()).toEqual(before);
  });

  it('in createBaton options and their nested objects', () => {
    const store = rt.store;
    expect(refusal(() => createBaton({ store, sechdule: {} } as never))).toMatchObject({
      code: 'INVALID_OPTION',
      field: 'createBaton options.sechdule',
      message: expect.stringContaining('did you mean "schedule"'),
    });
    expect(refusal(() => createBaton({ store, worker: { concurency: 2 } } as never))).toMatchObject({
      field: 'worker.concurency',
    });
    expect(
      refusal(() => createBaton({ store, schedule: { defaultTimeZone: 'UTC' } } as never)),
    ).toMatchObject({
      field: 'schedule.defaultTimeZone',
      message: expect.stringContaining('did you mean "defaultTimezone"'),
    });
  });

  it('in task options, retry and escalation', () => {
    expect(refusal(() => defineTask({ name: 't', run, timout: '5s' } as never))).toMatchObject({
      code: 'INVALID_OPTION',
      field: 'task "t".timout',
      message: expect.stringContaining('did you mean "timeout"'),
    });
    expect(refusal(() => defineTask({ name: 't', run, retry: { maxRetry: 2 } } as never))).toMatchObject({
      field: 'task "t".retry.maxRetry',
    });
    expect(refusal(() => defineTask({ name: 't', run, escalation: { asks: true } } as never))).toMatchObject({
      field: 'task "t".escalation.asks',
    });
  });

  it('in run options, and nothing is stored', async () => {
    const task = defineTask({ name: 't', run });
    const before = await rt.store.countRuns();
    expect(await refusalOf(rt.baton.start(task, {}, { budgte: '5m' } as never))).toMatchObject({
      code: 'INVALID_OPTION',
      field: 'start options.budgte',
      message: expect.stringContaining('did you mean "budget"'),
    });
    expect(await rt.store.countRuns()).toEqual(before);
  });

  it('in flow options and flow steps', () => {
    const task = defineTask({ name: 't', run });
    expect(
      refusal(() => defineFlow({ name: 'f', steps: [{ id: 'a', task }], budgte: '1m' } as never)),
    ).toMatchObject({ field: 'flow "f".budgte' });
    expect(
      refusal(() =>
        defineFlow({
          name: 'f',
          steps: [
            { id: 'a', task },
            { id: 'b', task, dependOn: ['a'] },
          ],
        } as never),
      ),
    ).toMatchObject({ field: 'flow "f".steps[1].dependOn', message: expect.stringContaining('"dependsOn"') });
  });

  it('in a JSON plan step: a dependOn typo is a problem, not a dropped edge', () => {
    const { problems } = normalizePlan({
      plan: {
        steps: [
          { aiName: 'a', description: 'notes are fine' },
          { aiName: 'b', dependOn: [0] },
        ],
      },
    });
    expect(problems).toEqual([expect.objectContaining({ kind: 'shape', field: 'plan.steps[1].dependOn' })]);
  });
});
