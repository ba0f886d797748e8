import { describe, expect, it } from 'vitest';
import type { DecisionRequest } from '../core/index.ts';
import { adviceAfter } from './run-commands.ts';

const request = (...ids: string[]) =>
  ({ choices: ids.map((id) => ({ id, label: id })), message: 'q' }) as unknown as DecisionRequest;

describe('the advice after a question', () => {
  it('advises resume only after the answers that leave work to do', () => {
    const text = adviceAfter(
      request('retry_extended', 'continue_partial', 'skip', 'different_mode', 'manual_input', 'abandon'),
      true,
      'run_1',
    );
    expect(text).toBe(
      [
        'after retry_extended or different_mode: continue it here with baton resume run_1 (or let a baton worker on this database take it)',
        'after continue_partial, skip, manual_input or abandon: the run is over, nothing to resume (see it with baton show run_1)',
      ].join('\n'),
    );
  });

  it('never advises resume when every answer ends the run', () => {
    expect(adviceAfter(request('skip', 'abandon'), true, 'run_1')).not.toContain('baton resume');
  });

  it("advises resuming the flow after a step's answer (the flow has work left)", () => {
    expect(adviceAfter(request('skip', 'abandon'), false, 'flow_1')).toBe(
      'then continue the flow with: baton resume flow_1 (abandon ends the whole flow)',
    );
  });
});
