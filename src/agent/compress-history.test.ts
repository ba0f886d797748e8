import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/index.ts';
import {
  compressConversationHistory,
  countModelTurns,
  readCompressionMarker,
  resolveCompressionOptions,
} from './compress-history.ts';
import { analyzeToolPairing, groupExchanges } from './conversation-exchanges.ts';

const TOOL_NAMES = ['search', 'fetch', 'summarize'];

/** A user prompt, then `turns` assistant turns, each calling `callsPerTurn` tools with results. */
function agentHistory(turns: number, callsPerTurn = 1, splitResults = false): ModelMessage[] {
  const history: ModelMessage[] = [{ role: 'user', content: 'research the topic' }];
  for (let t = 1; t <= turns; t++) {
    const ids = Array.from({ length: callsPerTurn }, (_, i) => `t${t}-c${i}`);
    history.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `thinking ${t}` },
        ...ids.map((id, i) => ({
          type: 'tool-call' as const,
          toolCallId: id,
          toolName: TOOL_NAMES[(t + i) % 3] as string,
          input: { t },
        })),
      ],
    });
    const results = ids.map((id, i) => ({
      type: 'tool-result' as const,
      toolCallId: id,
      toolName: TOOL_NAMES[(t + i) % 3] as string,
      output: { type: 'json' as const, value: { t, i } },
    }));
    if (splitResults) for (const r of results) history.push({ role: 'tool', content: [r] });
    else history.push({ role: 'tool', content: results });
  }
  return history;
}

function expectEveryCallAnswered(history: readonly ModelMessage[]): void {
  const pairing = analyzeToolPairing(history);
  expect(pairing.danglingCalls).toEqual([]);
  expect(pairing.orphanResults).toEqual([]);
}

describe('groupExchanges', () => {
  it('keeps an assistant tool call and its tool message in one exchange', () => {
    const exchanges = groupExchanges(agentHistory(3));
    expect(exchanges.map((e) => e.map((m) => m.role))).toEqual([
      ['user'],
      ['assistant', 'tool'],
      ['assistant', 'tool'],
      ['assistant', 'tool'],
    ]);
  });

  it('keeps results that arrive several messages after their call with the call', () => {
    const history: ModelMessage[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'search', input: {} }] },
      { role: 'user', content: 'still there?' },
      { role: 'assistant', content: 'waiting for the tool' },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'search', output: { type: 'text', value: 'x' } },
        ],
      },
      { role: 'assistant', content: 'done' },
    ];
    expect(groupExchanges(history).map((e) => e.length)).toEqual([1, 4, 1]);
  });

  it('does not let a call that never got a result swallow the rest of the history', () => {
    const history: ModelMessage[] = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'lost', toolName: 'search', input: {} }],
      },
      { role: 'user', content: 'next' },
      { role: 'assistant', content: 'ok' },
    ];
    expect(groupExchanges(history)).toHaveLength(4);
    expect(analyzeToolPairing(history).danglingCalls).toEqual([
      { toolCallId: 'lost', toolName: 'search', index: 1 },
    ]);
  });
});

describe('compressConversationHistory', () => {
  it('leaves a history at the threshold untouched', () => {
    const history = agentHistory(49); // 50 exchanges
    const result = compressConversationHistory(history);
    expect(result.compressed).toBe(false);
    expect(result.messages).toEqual(history);
    expect(result.exchangeRatio).toBe(1);
  });

  it('turns 80 exchanges into 5 + 1 marker + 20 = 26 (the protocol example)', () => {
    const history = agentHistory(79); // the prompt + 79 turns = 80 exchanges
    const result = compressConversationHistory(history);
    expect(result.compressed).toBe(true);
    expect(result.originalExchanges).toBe(80);
    expect(groupExchanges(result.messages)).toHaveLength(26);
    expect(result.resultExchanges).toBe(26);
    expect(result.omittedExchanges).toBe(55);
    expect(result.exchangeRatio).toBeCloseTo(26 / 80);
    expect(result.sizeRatio).toBeLessThan(0.4);
    expect(result.messages.slice(0, 9)).toEqual(history.slice(0, 9));
    expect(result.messages.slice(-40)).toEqual(history.slice(-40));
    expectEveryCallAnswered(result.messages);
  });

  it('says in one user message how much was left out, which turns and which tools', () => {
    const result = compressConversationHistory(agentHistory(79));
    const marker = result.messages[9];
    expect(marker?.role).toBe('user');
    const info = readCompressionMarker(marker);
    expect(info).toMatchObject({ omittedExchanges: 55, omittedMessages: 110, omittedTurns: 55 });
    expect([info?.firstOmittedTurn, info?.lastOmittedTurn]).toEqual([5, 59]);
    const calls = Object.values(info?.toolCalls ?? {}).reduce((a, b) => a + b, 0);
    expect(calls).toBe(55);
    const text = JSON.stringify(marker?.content);
    expect(text).toContain('55 exchanges');
    expect(text).toContain('model turns 5–59');
    for (const name of TOOL_NAMES) expect(text).toContain(name);
  });

  it('never splits parallel calls whose results come in separate tool messages', () => {
    const history = agentHistory(60, 3, true);
    const result = compressConversationHistory(history, { threshold: 10, keepFirst: 2, keepLast: 3 });
    expectEveryCallAnswered(result.messages);
    expect(groupExchanges(result.messages)).toHaveLength(6);
    // Every kept turn keeps its assistant message and all three tool messages.
    expect(result.messages.slice(-12).map((m) => m.role)).toEqual(
      Array.from({ length: 3 }, () => ['assistant', 'tool', 'tool', 'tool']).flat(),
    );
  });

  it('adds an earlier marker up when compressing again, so turn numbering survives', () => {
    const first = compressConversationHistory(agentHistory(79)).messages;
    const more = agentHistory(109).slice(159); // turns 80..109 (turn t starts at index 2t - 1)
    const grown = [...first, ...more];
    expect(countModelTurns(grown)).toBe(109);
    const second = compressConversationHistory(grown);
    expect(countModelTurns(second.messages)).toBe(109);
    const info = readCompressionMarker(second.messages[9]);
    // 55 from the first marker, plus the first marker's neighbours dropped now (turns 60..89).
    expect(info?.omittedExchanges).toBe(55 + 30);
    expect([info?.firstOmittedTurn, info?.lastOmittedTurn]).toEqual([5, 89]);
    expectEveryCallAnswered(second.messages);
  });

  it('rejects invalid settings with an error naming the field', () => {
    const history = agentHistory(3);
    const cases: Array<[Parameters<typeof compressConversationHistory>[1], string]> = [
      [{ threshold: -1 }, 'options.threshold'],
      [{ keepFirst: 1.5 }, 'options.keepFirst'],
      [{ keepLast: Number.NaN }, 'options.keepLast'],
      [{ threshold: 10, keepFirst: 5, keepLast: 6 }, 'options.threshold'],
    ];
    for (const [options, field] of cases) {
      const err = (() => {
        try {
          compressConversationHistory(history, options);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
    expect(() => resolveCompressionOptions({ keepFirst: -2 }, 'compression')).toThrow(
      /compression\.keepFirst/,
    );
    expect(() => compressConversationHistory('nope' as unknown as ModelMessage[])).toThrow(/history must be/);
  });
});
