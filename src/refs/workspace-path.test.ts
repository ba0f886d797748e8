import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonError, isBatonError } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import { createResolver, type Resolver } from './resolver.ts';

let base: string;
let root: string;
let resolver: Resolver;

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), 'baton-refs-ws-'));
  root = path.join(base, 'workspace');
  mkdirSync(path.join(root, 'papers'), { recursive: true });
  mkdirSync(path.join(root, 'notes'), { recursive: true });
  writeFileSync(path.join(root, 'papers', 'a.md'), '# A\n\npaper a\n');
  writeFileSync(path.join(root, 'notes', 'n.txt'), 'note\n');
  writeFileSync(path.join(base, 'secret.txt'), 'outside\n');
  mkdirSync(path.join(base, 'outside-dir'));
  writeFileSync(path.join(base, 'outside-dir', 'x.txt'), 'outside\n');
  symlinkSync(path.join(base, 'secret.txt'), path.join(root, 'papers', 'link-out.txt'));
  symlinkSync(path.join(base, 'outside-dir'), path.join(root, 'dir-out'));
  symlinkSync(path.join(root, 'papers', 'a.md'), path.join(root, 'notes', 'link-in.md'));
  resolver = createResolver({
    workspaceRoot: root,
    clock: new ManualClock(),
    getTaskOutput: async () => ({ status: 'missing' }),
  });
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

const file = (p: string) => ({ ref_type: 'file', path: p });

/** The thrown error (denials abort by default), or the resolution if nothing was thrown. */
function failure(p: string, permissions?: { roots?: string[] }): Promise<unknown> {
  return resolver.resolveReference(file(p), permissions ? { permissions } : {}).catch((e: unknown) => e);
}

describe('file references stay inside the workspace', () => {
  it('reads a relative path, an absolute path inside the root and the virtual /workspace prefix', async () => {
    for (const p of [
      'papers/a.md',
      path.join(root, 'papers/a.md'),
      '/workspace/papers/a.md',
      './notes/../papers/a.md',
    ])
      expect(await resolver.resolveReference(file(p))).toEqual({
        ok: true,
        value: '# A\n\npaper a\n',
        attempts: 1,
      });
  });

  it.each([
    '../../etc/passwd',
    '../secret.txt',
    '/etc/passwd',
    '/workspace/../secret.txt',
    '/workspaces/x.txt',
    'papers/../../secret.txt',
  ])('denies %s with REF_PERMISSION_DENIED (abort by default)', async (p) => {
    const err = await failure(p);
    expect(isBatonError(err, 'REF_PERMISSION_DENIED')).toBe(true);
    expect((err as BatonError).data.failure).toMatchObject({ fallback_strategy: 'abort' });
  });

  it.each([
    '%2e%2e/%2e%2e/etc/passwd',
    '..%2fsecret.txt',
    'papers%5C..%5C..%5Csecret.txt',
    '%2E%2E/secret.txt',
  ])('denies the percent-encoded traversal %s without decoding it', async (p) => {
    expect(isBatonError(await failure(p), 'REF_PERMISSION_DENIED')).toBe(true);
  });

  it('denies a symlink to a file outside the root, and a path through a symlinked folder', async () => {
    expect(isBatonError(await failure('papers/link-out.txt'), 'REF_PERMISSION_DENIED')).toBe(true);
    expect(isBatonError(await failure('dir-out/x.txt'), 'REF_PERMISSION_DENIED')).toBe(true);
    // missing file behind the outside link: still a denial, not "not found"
    expect(isBatonError(await failure('dir-out/nothing.txt'), 'REF_PERMISSION_DENIED')).toBe(true);
  });

  it('follows a symlink that stays inside the root', async () => {
    expect(await resolver.resolveReference(file('notes/link-in.md'))).toMatchObject({ ok: true });
  });

  it('reports a missing file inside the root as REF_NOT_FOUND with the default null', async () => {
    const r = await resolver.resolveReference(file('papers/missing.pdf'));
    expect(r).toMatchObject({
      ok: false,
      value: null,
      failure: { ref_type: 'file', error_code: 'REF_NOT_FOUND' },
    });
  });

  it('reads a real absolute path inside a root that itself lies under the virtual prefix', async () => {
    const nested = createResolver({
      workspaceRoot: root,
      virtualRoot: path.dirname(root),
      clock: new ManualClock(),
      getTaskOutput: async () => ({ status: 'missing' }),
    });
    expect((await nested.resolveReference(file(path.join(root, 'papers/a.md')))).ok).toBe(true);
    expect((await nested.resolveReference(file(`${path.dirname(root)}/papers/a.md`))).ok).toBe(true);
  });

  it('denies every file reference when no workspace is configured', async () => {
    const bare = createResolver({
      clock: new ManualClock(),
      getTaskOutput: async () => ({ status: 'missing' }),
    });
    await expect(bare.resolveReference(file('papers/a.md'))).rejects.toMatchObject({
      code: 'REF_PERMISSION_DENIED',
    });
  });
});

describe('per-task permitted roots', () => {
  it('reads inside a permitted folder', async () => {
    const r = await resolver.resolveReference(file('papers/a.md'), { permissions: { roots: ['papers'] } });
    expect(r.ok).toBe(true);
  });

  it('denies a file of the workspace outside the permitted folders, existing or not', async () => {
    for (const p of ['notes/n.txt', 'notes/missing.txt'])
      expect(isBatonError(await failure(p, { roots: ['papers'] }), 'REF_PERMISSION_DENIED')).toBe(true);
  });

  it('judges a symlink by its target: a link in a permitted folder to an unpermitted one is denied', async () => {
    const err = await failure('notes/link-in.md', { roots: ['notes'] });
    expect(isBatonError(err, 'REF_PERMISSION_DENIED')).toBe(true);
  });

  it('accepts permitted roots written with the virtual prefix, and ignores ones outside the root', async () => {
    expect(
      (
        await resolver.resolveReference(file('papers/a.md'), {
          permissions: { roots: ['/workspace/papers'] },
        })
      ).ok,
    ).toBe(true);
    expect(
      isBatonError(await failure('papers/a.md', { roots: ['../outside-dir'] }), 'REF_PERMISSION_DENIED'),
    ).toBe(true);
  });

  it('an empty list permits nothing', async () => {
    expect(isBatonError(await failure('papers/a.md', { roots: [] }), 'REF_PERMISSION_DENIED')).toBe(true);
  });
});

describe('resolver options', () => {
  it.each([
    [{ workspaceRoot: 'relative/dir' }, 'workspaceRoot'],
    [{ workspaceRoot: '/tmp', virtualRoot: '/' }, 'virtualRoot'],
    [{ workspaceRoot: '/tmp', maxFileBytes: 0 }, 'maxFileBytes'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ tables: { papers: { columns: ['id'] } } }, 'sql'],
  ])('refuses %j with INVALID_OPTION naming %s', (extra, field) => {
    const make = () =>
      createResolver({
        clock: new ManualClock(),
        getTaskOutput: async () => ({ status: 'missing' }),
        ...extra,
      });
    expect(make).toThrow(BatonError);
    expect(make).toThrow(new RegExp(`^${field}`));
  });
});
