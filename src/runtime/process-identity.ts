/**
 * Who holds a lease, and whether that process still exists. A worker id names its host and pid;
 * on the same host a restarted process can see at once that the previous owner is gone (no such
 * pid, or the pid now belongs to a process that started later) and take its runs back without
 * waiting for the lease to expire. Leases held on other hosts simply expire.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { WorkerRecord } from '../store/index.ts';

export interface ProcessIdentity {
  host: string;
  pid: number;
  processStart: string | null;
}

/** The kernel's start time of a process (field 22 of /proc/<pid>/stat), or null off Linux. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * `BATON_HOST` overrides the host name: containers that share a host name but not a pid namespace
 * must not judge each other's pids (each would take the other's runs as "gone" at once). Workers
 * with different hosts recover each other's runs when the lease expires.
 */
export function currentProcess(): ProcessIdentity {
  const host = process.env.BATON_HOST || hostname();
  return { host, pid: process.pid, processStart: processStartTime(process.pid) };
}

export function newWorkerId(identity: ProcessIdentity): string {
  return `${identity.host}/${identity.pid}/${randomBytes(3).toString('hex')}`;
}

/** True when a worker registered on this host is certainly gone. */
export function isGoneOnThisHost(worker: WorkerRecord, host: string): boolean {
  if (worker.host !== host) return false;
  try {
    process.kill(worker.pid, 0);
  } catch (err) {
    // EPERM: the pid exists but belongs to another user, so it is alive.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  if (worker.processStart === null) return false;
  const now = processStartTime(worker.pid);
  return now !== null && now !== worker.processStart;
}
