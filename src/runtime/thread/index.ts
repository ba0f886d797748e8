/**
 * Thread isolation (`isolation: "thread"`): a task body runs in a worker thread whose context calls
 * reach the attempt's AttemptContext by message passing, and which the engine terminates at the
 * attempt's hard deadline — so even a task that spins the CPU cannot outlive its attempt. The task's
 * module is imported again in every thread, so it should define tasks and do nothing else at load.
 */
export { startThreadAttempt, type ThreadAttempt, type ThreadAttemptOptions } from './run-in-thread.ts';
export { toModuleUrl } from './thread-entry.ts';
