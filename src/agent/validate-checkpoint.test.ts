import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/index.ts';
import { type CheckpointState, createCheckpointState } from './checkpoint-state.ts';
import { validateCheckpoint } from './validate-checkpoint.ts';

const NOW = Date.UTC(2026, 0, 1, 12);

const history: ModelMessage[] = [
  { role: 'user', content: 'analyse the battery' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'readings', input: {} }] },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'c1', toolName: 'readings', output: { type: 'json', value: [1] } },
    ],
  },
];

function validState(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const state = createCheckpointState({
    conversationHistory: history,
    turnCount: 8,
    toolCallCount: 12,
    contextSummary: { systemId: 'sys_123' },
    elapsedMs: 55_000,
    now: NOW,
  });
  return { ...state, ...overrides };
}

function rejection(input: unknown): { field: string; reason: string } {
  const result = validateCheckpoint(input);
  if (result.ok) throw new Error('expected the checkpoint to be rejected');
  return result;
}

describe('createCheckpointState', () => {
  it('captures the protocol schema with an ISO timestamp and version 1.0', () => {
    const state = validState() as unknown as CheckpointState;
    expect(Object.keys(state).sort()).toEqual([
      'checkpointedAt',
      'contextSummary',
      'conversationHistory',
      'elapsedMs',
      'toolCallCount',
      'turnCount',
      'version',
    ]);
    expect(state.checkpointedAt).toBe('2026-01-01T12:00:00.000Z');
    expect(state.version).toBe('1.0');
  });

  it('compresses a long history by default and keeps it whole when told', () => {
    const long: ModelMessage[] = Array.from({ length: 80 }, (_, i) => ({
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `m${i}`,
    }));
    const base = { turnCount: 40, toolCallCount: 0, elapsedMs: 1, now: NOW };
    expect(createCheckpointState({ ...base, conversationHistory: long }).conversationHistory).toHaveLength(
      26,
    );
    expect(
      createCheckpointState({ ...base, conversationHistory: long, compression: false }).conversationHistory,
    ).toHaveLength(80);
  });

  it('refuses bad counters with an error naming the field', () => {
    const base = { conversationHistory: history, turnCount: 1, toolCallCount: 1, elapsedMs: 0, now: NOW };
    for (const [patch, field] of [
      [{ turnCount: -1 }, 'turnCount'],
      [{ toolCallCount: 2.5 }, 'toolCallCount'],
      [{ elapsedMs: Number.NaN }, 'elapsedMs'],
    ] as const) {
      expect(() => createCheckpointState({ ...base, ...patch })).toThrow(ValidationError);
      try {
        createCheckpointState({ ...base, ...patch });
      } catch (err) {
        expect((err as ValidationError).field).toBe(field);
      }
    }
  });
});

describe('validateCheckpoint', () => {
  it('accepts a checkpoint as saved, and as the JSON string a store gives back', () => {
    const state = validState();
    const fromObject = validateCheckpoint(state);
    const fromJson = validateCheckpoint(JSON.stringify(state));
    expect(fromObject).toEqual({ ok: true, state, warnings: [] });
    expect(fromJson).toEqual(fromObject);
  });

  it('refuses a missing or corrupt checkpoint without throwing', () => {
    expect(rejection(undefined).field).toBe('state');
    expect(rejection(null).field).toBe('state');
    expect(rejection('{"conversationHistory": [').reason).toMatch(/not valid JSON/);
    expect(rejection([1, 2]).field).toBe('state');
    expect(rejection(42).field).toBe('state');
  });

  it('names the field that is wrong', () => {
    expect(rejection(validState({ conversationHistory: 'hi' })).field).toBe('conversationHistory');
    expect(rejection(validState({ turnCount: -1 })).field).toBe('turnCount');
    expect(rejection(validState({ turnCount: '8' })).field).toBe('turnCount');
    expect(rejection(validState({ toolCallCount: 1.5 })).field).toBe('toolCallCount');
    expect(rejection(validState({ elapsedMs: -5 })).field).toBe('elapsedMs');
    expect(rejection(validState({ checkpointedAt: 'yesterday' })).field).toBe('checkpointedAt');
    expect(rejection(validState({ contextSummary: [] })).field).toBe('contextSummary');
    expect(rejection(validState({ conversationHistory: [{ role: 'robot', content: 'x' }] })).field).toBe(
      'conversationHistory[0].role',
    );
    expect(rejection(validState({ conversationHistory: [null] })).field).toBe('conversationHistory[0]');
  });

  it('refuses a history with a tool call that has no result', () => {
    const broken = validState({ conversationHistory: history.slice(0, 2) });
    const { field, reason } = rejection(broken);
    expect(field).toBe('conversationHistory[1]');
    expect(reason).toMatch(/"c1".*no result/);
  });

  it('reads a newer minor version with a warning, and refuses another major or garbage', () => {
    const newer = validateCheckpoint(validState({ version: '1.3', extra: true }));
    expect(newer.ok).toBe(true);
    if (newer.ok) {
      expect(newer.warnings).toEqual([expect.stringContaining('1.3 is newer than 1.0')]);
      expect(newer.state).not.toHaveProperty('extra');
    }
    expect(validateCheckpoint(validState({ version: '1.0.7' })).ok).toBe(true);
    expect(rejection(validState({ version: '2.0' })).reason).toMatch(/different major/);
    expect(rejection(validState({ version: '0.9' })).field).toBe('version');
    expect(rejection(validState({ version: 'banana' })).field).toBe('version');
    expect(rejection(validState({ version: undefined })).field).toBe('version');
    expect(validateCheckpoint(validState({ version: '2.1' }), { currentVersion: '2.4' }).ok).toBe(true);
  });

  it('fills a missing contextSummary with {} and says so', () => {
    const { contextSummary: _, ...rest } = validState();
    const result = validateCheckpoint(rest);
    expect(result.ok && result.state.contextSummary).toEqual({});
    expect(result.ok && result.warnings).toEqual([expect.stringContaining('contextSummary')]);
  });

  it('never throws on arbitrary data', () => {
    const junk: unknown[] = [
      '',
      'null',
      '[]',
      true,
      Symbol('x'),
      () => 1,
      { version: '1.0' },
      { version: '1.0', conversationHistory: [{}] },
      { version: '1.0', conversationHistory: [{ role: 'tool', content: 'text' }] },
      { version: '1.0', conversationHistory: [], turnCount: 0, toolCallCount: 0, elapsedMs: 0 },
    ];
    for (const value of junk) expect(validateCheckpoint(value).ok).toBe(false);
  });
});
