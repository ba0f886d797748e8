/** What the runtime's parts share: the store, the clock, the logger, the tasks, and the defaults. */
import type { Logger } from 'pino';
import { BatonError } from '../core/index.ts';
import type { Store } from '../store/index.ts';
import type { Clock } from '../time/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { DeliveryTargets } from './delivery-routes.ts';
import type { ProgressOptions } from './scheduled-delivery.ts';
import type { StepInputs } from './step-inputs.ts';

export interface Engine {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly tasks: TaskRegistry;
  /** How long finished runs are kept unless their task says otherwise. */
  readonly ttlMs: number;
  /** Data references and context budgets for step inputs. */
  readonly inputs: StepInputs;
  /**
   * Scheduled delivery: the targets stored with the runs this process creates, the routes it can
   * send (its callback, its webhooks), and the in-progress notices.
   */
  readonly delivery: { channels: DeliveryTargets; routes: readonly string[]; progress: ProgressOptions };
  /** Defaults for reading `schedule` expressions. */
  readonly scheduling: { defaultTimezone?: string; horizonMs?: number };
  /**
   * Runs this process has just made claimable (started, resumed), called in the same turn as the
   * write that does it: a local worker with room claims them in that write's commit instead of one
   * commit later. Without a local worker it does nothing; the runs wait for any worker as before.
   */
  offer(runIds: readonly string[]): void;
}

export class TaskRegistry {
  private readonly byName = new Map<string, TaskDefinition>();

  register(task: TaskDefinition): void {
    const existing = this.byName.get(task.name);
    if (existing && existing !== task)
      throw new BatonError('INVALID_OPTION', `another task named "${task.name}" is already registered`, {
        data: { task: task.name },
      });
    this.byName.set(task.name, task);
  }

  get(name: string): TaskDefinition | undefined {
    return this.byName.get(name);
  }

  require(name: string): TaskDefinition {
    const task = this.byName.get(name);
    if (!task)
      throw new BatonError(
        'TASK_NOT_FOUND',
        `unknown task "${name}" (registered: ${this.names().join(', ') || 'none'})`,
        {
          data: { task: name },
        },
      );
    return task;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  limits(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, t] of this.byName) if (t.concurrency !== null) out[name] = t.concurrency;
    return out;
  }
}
