/**
 * Confines file references to the workspace root (and to a task's permitted subfolders).
 *
 * Order of checks, each failing with REF_PERMISSION_DENIED unless noted:
 * 1. NUL bytes and percent-encoded dots or separators (`%2e`, `%2f`, `%5c`) are refused: paths
 *    are file paths, never URL-decoded, and an encoded `..` is an attempt to slip past a check.
 * 2. The path is mapped lexically: an absolute path inside the root as is, else the virtual prefix
 *    (`/workspace/x` → `<root>/x`), another absolute path as is, a relative path against the
 *    root; `..` is normalised; the result must lie inside the root. No file-system access happens
 *    before this passes.
 * 3. realpath: the resolved target (symlinks followed) must still lie inside the root, and inside
 *    one of the task's permitted roots when it has any. A missing target is REF_NOT_FOUND, unless
 *    its nearest existing ancestor already resolves outside (then still a denial).
 * The file is then opened with O_NOFOLLOW. What remains is a race with someone who can write
 * inside the workspace and swaps a directory for a symlink between check and open.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { BatonError } from '../core/index.ts';

export interface WorkspaceOptions {
  /** Absolute path of the workspace root on disk. */
  root: string;
  /** Absolute prefix that stands for the root in references, e.g. `/workspace`; null for none. */
  virtualRoot: string | null;
}

const ENCODED_TRAVERSAL = /%(2e|2f|5c)/i;

const denied = (message: string, requested: string) =>
  new BatonError('REF_PERMISSION_DENIED', message, { data: { field: 'path', path: requested } });

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Step 1 and 2: the lexical path on disk, or a denial. */
export function lexicalPath(requested: string, ws: WorkspaceOptions): string {
  if (requested.includes('\0')) throw denied('path contains a NUL character', requested);
  if (ENCODED_TRAVERSAL.test(requested))
    throw denied(`path ${JSON.stringify(requested)} contains a percent-encoded dot or separator`, requested);
  const v = ws.virtualRoot;
  let target = path.resolve(ws.root, requested);
  // A real absolute path inside the root wins over the virtual prefix when both could apply
  // (a root that itself lives under /workspace/...).
  const virtual = v !== null && (requested === v || requested.startsWith(`${v}/`));
  if (virtual && !(path.isAbsolute(requested) && isInside(ws.root, target)))
    target = path.join(ws.root, requested.slice(v.length));
  if (!isInside(ws.root, target))
    throw denied(`path ${JSON.stringify(requested)} is outside the workspace`, requested);
  return target;
}

async function realOrNull(p: string): Promise<string | null> {
  try {
    return await realpath(p);
  } catch {
    return null;
  }
}

/** Resolves the workspace root and the permitted roots (relative to it) to real paths, once. */
export async function realRoots(ws: WorkspaceOptions, permitted: readonly string[] | undefined) {
  const root = await realpath(ws.root);
  if (permitted === undefined) return { root, permitted: [root] };
  const real: string[] = [];
  for (const sub of permitted) {
    let lexical: string;
    try {
      lexical = lexicalPath(sub, ws);
    } catch {
      continue; // a permitted root outside the workspace grants nothing
    }
    const r = await realOrNull(lexical);
    if (r !== null && isInside(root, r)) real.push(r);
  }
  return { root, permitted: real };
}

/** Steps 1–3: the real path of a readable file inside the workspace and the permitted roots. */
export async function confinedPath(
  requested: string,
  ws: WorkspaceOptions,
  permittedRoots: readonly string[] | undefined,
): Promise<string> {
  const lexical = lexicalPath(requested, ws);
  const roots = await realRoots(ws, permittedRoots);
  const allowed = (real: string) =>
    isInside(roots.root, real) && roots.permitted.some((p) => isInside(p, real));
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      throw denied(`path ${JSON.stringify(requested)} is not readable`, requested);
    // Do not confirm or deny existence outside the permitted area.
    let ancestor = path.dirname(lexical);
    let realAncestor = await realOrNull(ancestor);
    while (realAncestor === null && ancestor !== path.dirname(ancestor)) {
      ancestor = path.dirname(ancestor);
      realAncestor = await realOrNull(ancestor);
    }
    if (realAncestor === null)
      throw denied(`path ${JSON.stringify(requested)} resolves outside the workspace`, requested);
    // Where the file would be if it existed, symlinks of the existing part followed.
    const wouldBe = path.join(realAncestor, path.relative(ancestor, lexical));
    if (!isInside(roots.root, wouldBe))
      throw denied(`path ${JSON.stringify(requested)} resolves outside the workspace`, requested);
    if (!allowed(wouldBe))
      throw denied(`path ${JSON.stringify(requested)} is outside the task's permitted folders`, requested);
    throw new BatonError('REF_NOT_FOUND', `file ${JSON.stringify(requested)} does not exist`, {
      cause,
      data: { field: 'path', path: requested },
    });
  }
  if (!isInside(roots.root, real))
    throw denied(
      `path ${JSON.stringify(requested)} resolves (through a symlink) outside the workspace`,
      requested,
    );
  if (!allowed(real))
    throw denied(`path ${JSON.stringify(requested)} is outside the task's permitted folders`, requested);
  return real;
}
