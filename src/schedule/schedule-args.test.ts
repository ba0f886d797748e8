import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { declaresSchedule, SCHEDULE_JSON_SCHEMA, splitSchedule } from './index.ts';

describe('schedule arguments', () => {
  it('offers the protocol schema: a string or an object with when/language/timezone', () => {
    const [asString, asObject] = SCHEDULE_JSON_SCHEMA.oneOf;
    expect(asString.type).toBe('string');
    expect(asObject.type).toBe('object');
    expect(Object.keys(asObject.properties)).toEqual(['when', 'language', 'timezone']);
    expect(asObject.additionalProperties).toBe(true);
  });

  it('accepts a schedule only from a tool whose schema declares it', () => {
    const declared = {
      type: 'object',
      properties: { prompt: { type: 'string' }, schedule: SCHEDULE_JSON_SCHEMA },
    };
    expect(declaresSchedule(declared)).toBe(true);
    expect(declaresSchedule({ type: 'object', properties: { prompt: { type: 'string' } } })).toBe(false);
    expect(declaresSchedule({ type: 'object' })).toBe(false);
    expect(declaresSchedule({ properties: ['schedule'] })).toBe(false);
    expect(declaresSchedule(Object.create({ properties: { schedule: {} } }))).toBe(false);
    for (const notSchema of [undefined, null, 'schedule', 3, []])
      expect(declaresSchedule(notSchema)).toBe(false);
  });

  it('removes schedule from the arguments without touching the caller’s object', () => {
    const args = { prompt: '1girl', schedule: 'in 2 minutes' };
    const split = splitSchedule(args);
    expect(split).toEqual({ args: { prompt: '1girl' }, schedule: 'in 2 minutes' });
    expect(args.schedule).toBe('in 2 minutes');
    expect(split.args).not.toBe(args);
  });

  it('returns no schedule key when there was none, and refuses non-objects', () => {
    const split = splitSchedule({ prompt: 'x' });
    expect('schedule' in split).toBe(false);
    expect(split.args).toEqual({ prompt: 'x' });
    expect('schedule' in splitSchedule({ prompt: 'x', schedule: undefined })).toBe(false);
    let caught: unknown;
    try {
      splitSchedule(null as unknown as Record<string, unknown>);
    } catch (err) {
      caught = err;
    }
    expect(isBatonError(caught, 'INVALID_INPUT')).toBe(true);
  });
});
