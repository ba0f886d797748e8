/** Baton CLI processes for the fleet test: started, watched for a line, killed at the end. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { TSX_LOADER } from '../tsx-loader.ts';

const root = join(import.meta.dirname, '..', '..');
const children = new Set<ChildProcess>();

/** SIGKILLs every process started here that is still running. */
export function killAll(): void {
  for (const c of children) c.kill('SIGKILL');
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export interface Proc {
  child: ChildProcess;
  /** The last few KB it printed on stderr (shown if it exits). */
  tail: () => string;
}

/** `baton --db <url> <args>` in `cwd`, with `env` added to this process's environment. */
export function batonProcess(
  where: { url: string; cwd: string; env: Record<string, string> },
  args: string[],
): Proc {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), '--db', where.url, ...args],
    {
      cwd: where.cwd,
      env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1', ...where.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  let err = '';
  child.stderr?.on('data', (d) => {
    err = (err + String(d)).slice(-4_000);
  });
  return { child, tail: () => err };
}

/** Resolves with the first stdout/stderr text matching `pattern`; rejects if the process ends first. */
export function waitFor(proc: Proc, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (d: Buffer) => {
      seen += String(d);
      const m = seen.match(pattern);
      if (m) {
        proc.child[stream]?.off('data', onData);
        resolve(m);
      }
    };
    proc.child[stream]?.on('data', onData);
    proc.child.once('exit', (code, signal) =>
      reject(new Error(`process ended (${code ?? signal}) before ${pattern}: ${proc.tail()}`)),
    );
  });
}
