/**
 * A flow step's input is checked against its task's input type at compile time where the flow is
 * written in code (issue 15 item 2). Checked by `npm run typecheck` (each @ts-expect-error must
 * fail to compile) as well as run.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineFlow, type FlowDefinition } from './define-flow.ts';
import { defineTask } from './define-task.ts';

const count = defineTask({
  name: 'count-words',
  input: z.object({ text: z.string(), limit: z.number().optional() }),
  run: ({ text }) => text.split(' ').length,
});
const sum = defineTask({
  name: 'sum',
  input: z.object({ values: z.array(z.number()) }),
  run: (i) => i.values.length,
});
const free = defineTask({ name: 'free', run: (input: unknown) => input });
const reference = { data_reference: { ref_type: 'task_output', task_id: 'a' } };

describe("a step's input in code", () => {
  it("accepts a value of the task's input type, or a function of the flow's input returning one", () => {
    const flow = defineFlow({
      name: 'typed',
      steps: [
        { id: 'a', task: count, input: { text: 'one two' } },
        { id: 'b', task: count, input: (i: { words: string[] }) => ({ text: i.words.join(' '), limit: 3 }) },
        { id: 'c', task: free, input: { anything: [1, 'two'] } },
        { id: 'd', task: 'registered-by-name', input: { checked: 'at start, by its schema' } },
      ],
    });
    expectTypeOf(flow).toEqualTypeOf<FlowDefinition<{ words: string[] }>>();
    expect(flow.toRawPlan({ words: ['x', 'y'] }).steps[1]?.input).toEqual({ text: 'x y', limit: 3 });
  });

  it('checks against what the schema accepts: a field with a default may be left out', () => {
    const ranked = defineTask({
      name: 'ranked',
      input: z.object({ topic: z.string(), top: z.number().default(6) }),
      run: (i) => i.top,
    });
    expectTypeOf(ranked.run).parameter(0).toEqualTypeOf<{ topic: string; top: number }>();
    defineFlow({ name: 'defaults', steps: [{ id: 'a', task: ranked, input: { topic: 'x' } }] });
    defineFlow({
      name: 'x',
      // @ts-expect-error top must still be a number when given
      steps: [{ id: 'a', task: ranked, input: { topic: 'x', top: 'six' } }],
    });
  });

  it('accepts a data reference in place of any field, or of the whole input', () => {
    defineFlow({
      name: 'referenced',
      steps: [
        { id: 'a', task: count, input: { text: 'one' } },
        { id: 'b', task: count, input: { text: reference } },
        { id: 'c', task: sum, input: { values: [1, reference] } },
        { id: 'd', task: sum, input: reference },
      ],
    });
  });

  it('refuses a field of the wrong type, a missing field, an unknown field and a wrong function result', () => {
    const refused = () => [
      defineFlow({
        name: 'x',
        // @ts-expect-error text must be a string
        steps: [{ id: 'a', task: count, input: { text: 42 } }],
      }),
      defineFlow({
        name: 'x',
        // @ts-expect-error text is required
        steps: [{ id: 'a', task: count, input: { limit: 1 } }],
      }),
      defineFlow({
        name: 'x',
        steps: [
          { id: 'a', task: count, input: { text: 'a' } },
          // @ts-expect-error sum takes values, not text
          { id: 'b', task: sum, input: { text: 'a' } },
        ],
      }),
      defineFlow({
        name: 'x',
        // @ts-expect-error the function must return the task's input
        steps: [{ id: 'a', task: sum, input: (i: { n: number }) => ({ values: i.n }) }],
      }),
    ];
    expectTypeOf(refused).toBeFunction();
  });
});
