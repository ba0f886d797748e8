/**
 * The interactive answer to an escalation when `baton run` or `resume` runs on a terminal: the
 * protocol's message, its choices numbered, one line of input. Piped runs never prompt; their
 * escalations are answered by the task's policy, or later with `baton decide`.
 */
import { createInterface } from 'node:readline/promises';
import type { DecisionRequest } from '../core/index.ts';
import type { Baton } from '../runtime/index.ts';

export async function promptDecision(baton: Baton, runId: string, request: DecisionRequest): Promise<void> {
  const run = await baton.getRun(runId);
  if (run?.status !== 'waiting' || run.waitReason !== 'decision') return;
  const err = process.stderr;
  err.write(`\n${request.message}\n\n`);
  request.choices.forEach((c, i) => {
    err.write(`  ${i + 1}) ${c.label}\n`);
  });
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const line = (await rl.question(`choose 1-${request.choices.length}: `)).trim();
      const choice = request.choices[Number(line) - 1] ?? request.choices.find((c) => c.id === line);
      if (!choice) continue;
      let answer: Record<string, unknown> = { choice: choice.id };
      if (choice.id === 'different_mode') {
        const mode = (await rl.question(`mode (${request.otherModes.join(', ')}): `)).trim();
        answer = { ...answer, mode };
      } else if (choice.id === 'manual_input') {
        answer = { ...answer, input: (await rl.question('your findings (text): ')).trim() || '(none)' };
      }
      try {
        await baton.decide(runId, answer, 'cli');
        return;
      } catch (e) {
        err.write(`${(e as Error).message}\n`);
      }
    }
  } finally {
    rl.close();
  }
}
