import { describe, expect, it } from 'vitest';
import { defineTask } from '../define-task.ts';
import { findTask } from './find-task.ts';

const task = (name: string) => defineTask({ name, run: () => name });

describe('findTask', () => {
  it('finds a task among named exports, inside the default export and in exported arrays', () => {
    const exports = {
      alpha: task('alpha'),
      all: [task('beta'), [task('gamma')]],
      default: { delta: task('delta'), group: { epsilon: task('epsilon') } },
    };
    for (const name of ['alpha', 'beta', 'gamma', 'delta', 'epsilon'])
      expect(findTask(exports, name, 'file:///tasks.ts').name).toBe(name);
  });

  it('does not search inside a named object export, which is data rather than a registry', () => {
    expect(() => findTask({ config: { hidden: task('hidden') } }, 'hidden', 'file:///tasks.ts')).toThrow(
      'module file:///tasks.ts exports no task named "hidden" (it exports no tasks)',
    );
  });

  it('names the tasks the module does export when the one asked for is missing', () => {
    const err = (() => {
      try {
        findTask({ a: task('alpha'), default: [task('beta')] }, 'gamma', 'file:///tasks.ts');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toMatchObject({
      code: 'TASK_NOT_FOUND',
      message: 'module file:///tasks.ts exports no task named "gamma" (it exports "alpha", "beta")',
      data: { module: 'file:///tasks.ts', taskName: 'gamma', exported: ['alpha', 'beta'] },
    });
  });
});
