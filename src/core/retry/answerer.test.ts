import { describe, expect, it } from 'vitest';
import { type Answerer, answererLabel, answererOf } from './answerer.ts';

describe('who answered a decision', () => {
  it('keeps the typed value when a row carries it, whatever its label says', () => {
    const person: Answerer = { kind: 'person', name: 'policy' };
    expect(answererOf({ by: 'policy', answeredBy: person })).toEqual(person);
  });

  it('decodes rows written before answeredBy existed from the labels the engine wrote', () => {
    expect(answererOf({ by: 'policy' })).toEqual({ kind: 'policy', trigger: 'unattended' });
    expect(answererOf({ by: 'policy (decision timeout)' })).toEqual({
      kind: 'policy',
      trigger: 'decision_timeout',
    });
    expect(answererOf({ by: 'cli' })).toEqual({ kind: 'person', name: 'cli' });
    expect(answererOf({})).toEqual({ kind: 'person', name: 'unknown' });
  });

  it('ignores a malformed answeredBy and falls back to the label', () => {
    expect(answererOf({ by: 'alice', answeredBy: { kind: 'policy', trigger: 'whenever' } })).toEqual({
      kind: 'person',
      name: 'alice',
    });
  });

  it('labels each answerer the way readers of `by` always saw it', () => {
    const all: Answerer[] = [
      { kind: 'policy', trigger: 'unattended' },
      { kind: 'policy', trigger: 'decision_timeout' },
      { kind: 'person', name: 'ops@example.com' },
    ];
    expect(all.map(answererLabel)).toEqual(['policy', 'policy (decision timeout)', 'ops@example.com']);
    for (const a of all) expect(answererOf({ by: answererLabel(a) })).toEqual(a);
  });
});
