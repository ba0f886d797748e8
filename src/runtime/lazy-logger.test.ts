/** The default silent logger answers as a silent pino does, and builds the real one only when needed. */
import { type Logger, pino } from 'pino';
import { expect, it } from 'vitest';
import { lazySilentLogger } from './lazy-logger.ts';

/** A silent pino writing its lines (without time, pid, host) to `lines`. */
function silentPino(lines: unknown[]): Logger {
  return pino(
    { level: 'silent', base: null, timestamp: false },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
}

/** Logs through `root` and its children before and after raising the root's level; returns what it saw. */
function exercise(root: Logger) {
  const seen: unknown[] = [];
  const early = root.child({ runId: 'r1' });
  early.info({ a: 1 }, 'dropped');
  root.error('dropped too');
  seen.push(root.level, early.level, root.isLevelEnabled('info'), early.isLevelEnabled('error'));
  root.level = 'info';
  seen.push(root.level, early.level, early.isLevelEnabled('info'), early.isLevelEnabled('debug'));
  early.info({ a: 2 }, 'kept');
  early.child({ step: 's' }).warn('nested');
  root.child({ late: true }).debug('below the level');
  early.bindings();
  seen.push(early.bindings());
  early.level = 'error';
  early.warn('below its own level');
  root.warn('root still at info');
  seen.push(root.level, early.level);
  return seen;
}

it('answers and logs as a silent pino does, before and after its level is raised', () => {
  const eagerLines: unknown[] = [];
  const lazyLines: unknown[] = [];
  const eager = exercise(silentPino(eagerLines));
  let builds = 0;
  const lazy = exercise(
    lazySilentLogger(() => {
      builds++;
      return silentPino(lazyLines);
    }),
  );
  expect(lazy).toEqual(eager);
  expect(lazyLines).toEqual(eagerLines);
  expect(eagerLines).toHaveLength(3);
  expect(builds).toBe(1);
});

it('builds nothing while only silent logging and children are asked for', () => {
  let builds = 0;
  const log = lazySilentLogger(() => {
    builds++;
    return pino({ level: 'silent' });
  });
  const child = log.child({ runId: 'r' }).child({ attempt: 1 });
  for (const l of [log, child]) {
    l.trace('x');
    l.debug('x');
    l.info({ a: 1 }, 'x');
    l.warn('x');
    l.error(new Error('x'));
    l.fatal('x');
    expect(l.level).toBe('silent');
    expect(l.isLevelEnabled('fatal')).toBe(false);
  }
  expect(builds).toBe(0);
  // Anything beyond silence builds the real logger once.
  expect(child.bindings()).toEqual({ runId: 'r', attempt: 1 });
  expect(builds).toBe(1);
});
