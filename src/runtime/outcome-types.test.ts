/** Types that tell the truth (issue 15 item 2): checked by `npm run typecheck` as well as run. */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { TimeoutResult } from '../core/index.ts';
import type { RunOutcome } from './baton.ts';
import { defineTask } from './define-task.ts';
import type { InvokeOutcome } from './invoke-child.ts';
import type { WaitForResult } from './task-context.ts';

describe('outcome types', () => {
  it("run.result(): only a succeeded outcome's output has the task's type", () => {
    const narrow = (out: RunOutcome<{ n: number }>) => {
      if (out.status === 'succeeded') expectTypeOf(out.output).toEqualTypeOf<{ n: number }>();
      else if (out.status === 'partial')
        expectTypeOf(out.output).toEqualTypeOf<TimeoutResult | Record<string, unknown>>();
      else {
        expectTypeOf(out.output).toEqualTypeOf<unknown>();
        expectTypeOf(out.error).toEqualTypeOf<Error | undefined>();
      }
    };
    expectTypeOf(narrow).toBeFunction();
  });

  it("ctx.invoke: the input is what the child's schema accepts (a field with a default may be left out)", () => {
    const child = defineTask({
      name: 'defaulted-child',
      input: z.object({ topic: z.string(), top: z.number().default(6) }),
      run: (i) => i.top,
    });
    defineTask({
      name: 'defaulted-parent',
      run: async (_: unknown, ctx) => {
        await ctx.invoke(child, { topic: 'x' });
        // @ts-expect-error top must still be a number when given
        await ctx.invoke(child, { topic: 'x', top: 'six' });
      },
    });
  });

  it('ctx.invoke: the outcome is a union by status, typed by the child task', () => {
    const child = defineTask({ name: 'typed-child', run: async () => ({ artifact: 'x' }) });
    defineTask({
      name: 'typed-parent',
      run: async (_: unknown, ctx) => {
        const r = await ctx.invoke(child, {});
        expectTypeOf(r).toEqualTypeOf<InvokeOutcome<{ artifact: string }>>();
        if (r.status === 'succeeded') expectTypeOf(r.output).toEqualTypeOf<{ artifact: string }>();
        else if (r.status === 'partial') expectTypeOf(r.output).toEqualTypeOf<TimeoutResult>();
        else expectTypeOf(r.error.message).toBeString();
        return null;
      },
    });
  });

  it("ctx.waitFor: the payload has the schema's type, and a timeout is its own case", () => {
    defineTask({
      name: 'typed-wait',
      run: async (_: unknown, ctx) => {
        const r = await ctx.waitFor('approve', { schema: z.object({ by: z.string() }) });
        expectTypeOf(r).toEqualTypeOf<WaitForResult<{ by: string }>>();
        if (r.status === 'received') expectTypeOf(r.payload).toEqualTypeOf<{ by: string }>();
        else expectTypeOf(r.timedOutAt).toBeNumber();
        return null;
      },
    });
  });

  it("ctx.lastCheckpoint.state has the checkpointSchema's type, and ctx.checkpoint takes only that", () => {
    defineTask({
      name: 'typed-checkpoint',
      checkpointSchema: z.object({ next: z.number() }),
      run: async (_: unknown, ctx) => {
        expectTypeOf(ctx.lastCheckpoint?.state).toEqualTypeOf<{ next: number } | undefined>();
        // @ts-expect-error — not the checkpoint's shape
        await ctx.checkpoint({ next: 'three' });
        await ctx.checkpoint({ next: 3 });
        return null;
      },
    });
    defineTask({
      name: 'untyped-checkpoint',
      run: async (_: unknown, ctx) => {
        expectTypeOf(ctx.lastCheckpoint?.state).toEqualTypeOf<unknown>();
        return null;
      },
    });
  });
});
