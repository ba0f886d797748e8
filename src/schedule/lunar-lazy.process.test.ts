import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** lunar-javascript costs ~150 ms to load: only a lunar date may load it, never `import 'baton'`. */

describe('the Chinese calendar library', () => {
  it('is loaded on the first lunar date only, never by importing baton', () => {
    const script = `
      const { createRequire } = await import('node:module');
      await import(process.argv[1]);
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('lunar-javascript'));
      const a = loaded();
      const { parseSchedule } = await import(process.argv[2]);
      const now = Date.UTC(2026, 2, 5, 6, 30);
      parseSchedule('tomorrow 9am', { now, timezone: 'Asia/Shanghai' });
      parseSchedule('国庆节', { now, timezone: 'Asia/Shanghai' });
      const b = loaded();
      parseSchedule('中秋节', { now, timezone: 'Asia/Shanghai' });
      console.log(JSON.stringify([a, b, loaded()]));`;
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        script,
        resolve(import.meta.dirname, '../index.ts'),
        resolve(import.meta.dirname, 'index.ts'),
      ],
      { cwd: resolve(import.meta.dirname, '../..'), encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop() as string)).toEqual([false, false, true]);
  });
});
