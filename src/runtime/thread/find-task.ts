/**
 * Finds a task by name among a module's exports: a named export, or one inside a `default` export
 * object or an exported array (`export const tasks = [a, b]`, `export default { a, b }`).
 */
import { BatonError } from '../../core/index.ts';
import { isTaskDefinition, type TaskDefinition } from '../define-task.ts';

function candidates(exports: Record<string, unknown>): TaskDefinition[] {
  const found: TaskDefinition[] = [];
  const visit = (value: unknown, depth: number) => {
    if (isTaskDefinition(value)) found.push(value);
    else if (depth > 0 && Array.isArray(value)) for (const v of value) visit(v, depth - 1);
    else if (depth > 0 && typeof value === 'object' && value !== null && !ArrayBuffer.isView(value))
      for (const v of Object.values(value)) visit(v, depth - 1);
  };
  for (const [key, value] of Object.entries(exports)) {
    // Only `default` is searched as an object: a named object export is someone's data, not a registry.
    if (key === 'default' || Array.isArray(value)) visit(value, 2);
    else visit(value, 0);
  }
  return found;
}

/** The task named `taskName` exported by `exports`; TASK_NOT_FOUND naming the tasks there are. */
export function findTask(exports: Record<string, unknown>, taskName: string, module: string): TaskDefinition {
  const all = candidates(exports);
  const task = all.find((t) => t.name === taskName);
  if (task) return task;
  const names = [...new Set(all.map((t) => `"${t.name}"`))];
  throw new BatonError(
    'TASK_NOT_FOUND',
    `module ${module} exports no task named "${taskName}" (${names.length > 0 ? `it exports ${names.join(', ')}` : 'it exports no tasks'})`,
    { data: { module, taskName, exported: all.map((t) => t.name) } },
  );
}
