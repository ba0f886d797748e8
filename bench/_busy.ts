/**
 * "One core busy" (issue 18 item 5): a child process spinning on the machine's last core, pinned
 * with `taskset`, while `fn` runs — what a neighbour (a build, another service) does to Baton's
 * figures. The child is killed when `fn` settles, and also if this process exits any other way.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';

let current: ChildProcess | undefined;
process.on('exit', () => current?.kill('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    current?.kill('SIGKILL');
    process.exit(130);
  });

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export function canPinCores(): boolean {
  return cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

export async function withBusyCore<T>(fn: () => Promise<T>): Promise<T> {
  const core = String(cpus().length - 1);
  const child = spawn('taskset', ['-c', core, process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
  current = child;
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  try {
    return await fn();
  } finally {
    await stop(child);
    current = undefined;
  }
}
