import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { createContextPlanner } from './create-context-planner.ts';
import { loadEncoding } from './encodings.ts';
import { createTokenCounter } from './token-counter.ts';

const ZH = '自注意力机制允许模型在序列的所有位置之间直接建立联系，从而实现高效的并行计算。';

function spyCounter() {
  const calls: string[] = [];
  const count = (text: string) => {
    calls.push(text);
    return text.length;
  };
  return {
    calls,
    counter: createTokenCounter({ counters: new Map([['spy', count]]), encodingFor: () => 'spy' }),
  };
}

describe('token counting', () => {
  it('counts a string as itself and any other value as its compact JSON text', async () => {
    const planner = await createContextPlanner();
    const o200k = await loadEncoding('o200k_base');
    const value = {
      atoms: [{ atom_id: 'a1', content: 'Transformer uses attention.', confidence: 0.9 }],
      n: 3,
    };
    expect(planner.countTokens('Hello, world!')).toBe(o200k('Hello, world!'));
    expect(planner.countTokens(value)).toBe(o200k(JSON.stringify(value)));
    expect(planner.countTokens(42)).toBe(o200k('42'));
    expect(planner.countTokens(undefined)).toBe(0);
  });

  it('forAgent counts as far as a limit with a bounded encoding, in full (cached) with a custom one', async () => {
    const o200k = await loadEncoding('o200k_base');
    const bounded = createTokenCounter({
      counters: new Map([['o', o200k]]),
      encodingFor: () => 'o',
    }).forAgent();
    const text = `${ZH} The scheduler retries each step with a growing timeout.`;
    const exact = o200k(text);
    expect(bounded.upTo!(text, exact)).toBe(exact);
    expect(bounded.upTo!(text, 5)).toBeGreaterThan(5);
    expect(bounded.upTo!(text, 5)).toBeLessThan(exact);
    expect(bounded.upTo!('', 0)).toBe(0);
    const { calls, counter } = spyCounter();
    const custom = counter.forAgent();
    expect(custom.upTo!('abcdef', 2)).toBe(6);
    expect(custom('abcdef')).toBe(6);
    expect(calls).toEqual(['abcdef']);
  });

  it('counts special-token text from documents as plain text instead of throwing', async () => {
    const planner = await createContextPlanner();
    expect(planner.countTokens('end <|endoftext|> here')).toBeGreaterThan(5);
  });

  it('uses each agent’s encoding: cl100k_base spends more tokens on Chinese than o200k_base', async () => {
    const planner = await createContextPlanner({ encodingFor: { Scholar: 'cl100k_base' } });
    const cl100k = await loadEncoding('cl100k_base');
    expect(planner.encodingOf('Scholar')).toBe('cl100k_base');
    expect(planner.encodingOf('Validator')).toBe('o200k_base');
    expect(planner.countTokens(ZH, 'Scholar')).toBe(cl100k(ZH));
    expect(planner.countTokens(ZH, 'Scholar')).toBeGreaterThan(planner.countTokens(ZH, 'Validator'));
  });

  it('accepts a custom tokenizer as an encoding and an encoding function', async () => {
    const planner = await createContextPlanner({
      customEncodings: { chars: (t) => t.length },
      encodingFor: (agent) => (agent === 'Claude' ? 'chars' : undefined),
      encodings: ['o200k_base'],
    });
    expect(planner.countTokens('abcdef', 'Claude')).toBe(6);
    expect(planner.encodingOf('Other')).toBe('o200k_base');
  });

  it('rejects an unknown encoding naming the agent’s field', async () => {
    const err = await createContextPlanner({ encodingFor: { Scholar: 'o300k' } }).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    expect((err as Error).message).toContain('encodingFor.Scholar');
  });

  it('rejects a value that is not JSON with an error naming it', () => {
    const { counter } = spyCounter();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => counter.count(cyclic)).toThrow(/value must be a JSON-serializable value/);
  });
});

describe('token count cache', () => {
  it('tokenizes an object once: identity hits skip even the JSON text', () => {
    const { calls, counter } = spyCounter();
    const value = { a: 'x'.repeat(50) };
    const first = counter.count(value);
    expect(counter.count(value)).toBe(first);
    expect(calls).toHaveLength(1);
    expect(counter.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it('serves an equal copy of a counted object from the text cache', () => {
    const { calls, counter } = spyCounter();
    counter.count({ a: [1, 2, 3] });
    counter.count({ a: [1, 2, 3] });
    expect(calls).toHaveLength(1);
  });

  it('keys long strings by content hash and still hits', () => {
    const { calls, counter } = spyCounter();
    const long = 'word '.repeat(1000);
    counter.count(long);
    counter.count(`${'word '.repeat(999)}word `);
    expect(calls).toHaveLength(1);
  });

  it('recounts an object after forget, for values mutated in place', () => {
    const { calls, counter } = spyCounter();
    const value = { a: 'short' };
    expect(counter.count(value)).toBe(JSON.stringify(value).length);
    value.a = 'much longer now';
    counter.forget(value);
    expect(counter.count(value)).toBe(JSON.stringify(value).length);
    expect(calls).toHaveLength(2);
  });

  it('stays within its entry bound', () => {
    const count = (t: string) => t.length;
    const counter = createTokenCounter({
      counters: new Map([['c', count]]),
      encodingFor: () => 'c',
      maxEntries: 3,
    });
    for (let i = 0; i < 10; i++) counter.count(`text ${i}`);
    expect(counter.stats().entries).toBe(3);
  });
});
