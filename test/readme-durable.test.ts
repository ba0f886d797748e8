/**
 * The README's durable-code example, run as written: the block after `<!-- example:durable -->` is
 * copied to a module (its `from 'baton'` pointed at the source) and driven on a manual clock.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { TaskDefinition } from '../src/index.ts';
import { eventOf, testRuntime } from '../src/testing/index.ts';

const root = join(import.meta.dirname, '..');
const dir = join(root, '.tmp', `readme-durable-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exampleModule(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const m = /<!-- example:durable -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (!m?.[1]) throw new Error('README has no durable example block');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'example.ts');
  const src = pathToFileURL(join(root, 'src', 'index.ts')).href;
  writeFileSync(file, m[1].replace("from 'baton'", `from '${src}'`));
  return file;
}

describe('README durable example', () => {
  it('builds two children in parallel, sleeps until the window, ships on approval', async () => {
    const mod = (await import(pathToFileURL(exampleModule()).href)) as {
      release: TaskDefinition<{ version: string; at: string }>;
    };
    const HOUR = 3_600_000;
    const rt = testRuntime({ worker: { pollMs: HOUR, leaseMs: HOUR } });
    try {
      const at = '2026-11-23T09:00:00Z';
      const run = await rt.baton.start(mod.release, { version: '1.4.0', at });
      // Children done (the run may wake once per child), then sleeping until the window.
      const suspendedAs = async (reason: string) => {
        for (let n = 1; ; n++) {
          await eventOf(rt, 'attempt:suspended', run.id, n);
          const r = await rt.baton.getRun(run.id);
          if (r?.status === 'waiting' && r.waitReason === reason) return n;
        }
      };
      const n = await suspendedAs('timer');
      expect(await rt.baton.getRun(run.id)).toMatchObject({ waitReason: 'timer', wakeAt: Date.parse(at) });
      const children = await rt.baton.listRuns({ parentId: run.id });
      expect(children.map((c) => c.status)).toEqual(['succeeded', 'succeeded']);
      await rt.clock.advance(Date.parse(at) - rt.clock.now());
      await eventOf(rt, 'attempt:suspended', run.id, n + 1);
      expect((await rt.baton.getRun(run.id))?.waitReason).toBe('signal');
      await rt.baton.signal(run.id, 'approve', { by: 'ada' });
      expect(await run.result()).toMatchObject({
        status: 'succeeded',
        output: { shipped: true, by: 'ada', artifacts: ['linux-1.4.0.tar.gz', 'mac-1.4.0.tar.gz'] },
      });
    } finally {
      await rt.dispose();
    }
  });
});
