import { describe, expect, it } from 'vitest';
import { defineTask } from '../runtime/index.ts';
import { defineConfig, parseConfig } from './index.ts';

const echo = defineTask({ name: 'echo', run: async (input: unknown) => input });

describe('parseConfig', () => {
  it('turns a config into createBaton options, paths relative to the file', () => {
    const config = defineConfig({
      db: './data/app.db',
      tasks: [echo],
      workspace: './corpus',
      tables: { atoms: { columns: ['id', 'content'] } },
      timezone: 'Asia/Shanghai',
      schedule: { horizon: '30d' },
      delivery: { webhooks: { ops: { url: 'https://example.com/hook', secret: 's' } } },
      ttl: '2h',
    });
    const r = parseConfig(config, '/srv/app/baton.config.ts');
    expect(r.db).toBe('/srv/app/data/app.db');
    expect(r.tasks).toEqual([echo]);
    expect(r.options.refs).toEqual({ workspaceRoot: '/srv/app/corpus', tables: config.tables });
    expect(r.options.schedule).toEqual({
      defaultTimezone: 'Asia/Shanghai',
      horizon: '30d',
      webhooks: { ops: { url: 'https://example.com/hook', secret: 's' } },
    });
    expect(r.options.ttl).toBe('2h');
  });

  it('keeps a postgres URL as it is', () => {
    expect(parseConfig({ db: 'postgres://u@h/db?schema=s' }, '/srv/baton.config.ts').db).toBe(
      'postgres://u@h/db?schema=s',
    );
  });

  it('takes the tasks of a module namespace and ignores its other exports', () => {
    expect(parseConfig({ tasks: { echo, helper: () => 1, VERSION: 3 } }).tasks).toEqual([echo]);
  });

  it('refuses unknown keys by name, at any depth', () => {
    expect(() => parseConfig({ timzone: 'UTC' }, '/a/baton.config.ts')).toThrow(
      '/a/baton.config.ts: timzone is not a known option',
    );
    expect(() => parseConfig({ schedule: { progress: { templat: 'x' } } })).toThrow(
      'schedule.progress.templat is not a known option',
    );
    expect(() => parseConfig({ context: { agentLimit: {} } })).toThrow(
      'context.agentLimit is not a known option',
    );
  });

  it('names the field and what was expected', () => {
    expect(() => parseConfig({ db: 3 })).toThrow('db must be a path (relative to the config file), got 3');
    expect(() => parseConfig({ timezone: 'Nowhere/Else' })).toThrow(/timezone is invalid: .*IANA/);
    expect(() => parseConfig({ delivery: { onDelivery: 'x' } })).toThrow(
      'delivery.onDelivery must be a function',
    );
    expect(() => parseConfig(null)).toThrow('the default export must be an object');
    let caught: unknown;
    try {
      parseConfig({ refs: { maxFileBytes: -1 } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'INVALID_OPTION', data: { field: 'refs.maxFileBytes' } });
  });
});
