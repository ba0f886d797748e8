/**
 * What a tool call answers, from the state of its run: the result, the partial findings with the id
 * to resume (protocol 003's resumable timeout, in MCP form), a question waiting for a decision, or
 * the acknowledgement of a scheduled delivery. Pure: the caller reads the run, this shapes it.
 */
import type { OpenDecision, RunSchedule } from '../runtime/index.ts';
import type { PartialRecord, RunRecord } from '../store/index.ts';

/** A `CallToolResult` of the MCP schema (the fields Baton fills). */
export interface ToolAnswer {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

function answer(structured: Record<string, unknown>, text: string, isError = false): ToolAnswer {
  return {
    content: [{ type: 'text', text }],
    structuredContent: structured,
    ...(isError ? { isError } : {}),
  };
}

function json(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

export function findingsOf(partials: readonly PartialRecord[]): unknown[] {
  return partials.flatMap((p) => p.findings);
}

/** A run that ended: its output, or its error. */
export function finishedAnswer(run: RunRecord, partials: readonly PartialRecord[]): ToolAnswer {
  const base = { run_id: run.id, task: run.name, status: run.status };
  if (run.status === 'succeeded')
    return answer({ ...base, output: run.output ?? null }, json(run.output ?? null));
  if (run.status === 'partial') {
    const findings = findingsOf(partials);
    return answer(
      { ...base, partial: true, output: run.output ?? null, findings },
      `Partial result of ${run.name} (${findings.length} finding(s)):\n${json(run.output ?? findings)}`,
    );
  }
  const error = run.error ?? { code: 'UNKNOWN', message: `the run ended ${run.status}` };
  return answer(
    { ...base, error: { code: error.code, message: error.message }, findings: findingsOf(partials) },
    `${run.name} ${run.status}: ${error.code}: ${error.message}`,
    true,
  );
}

/**
 * The run is still working when the client's patience runs out: hand back what it found so far and
 * how to continue, instead of letting the client's own timeout throw everything away.
 */
export function timeoutAnswer(
  run: RunRecord,
  partials: readonly PartialRecord[],
  waitedMs: number,
  replyWithinMs: number,
  wasResumed: boolean,
): ToolAnswer {
  const findings = findingsOf(partials);
  const structured = {
    run_id: run.id,
    task: run.name,
    status: 'timeout',
    partial: true,
    findings,
    run_status: run.status,
    error: `${run.name}_timeout`,
    message: `${run.name} is still running after ${waitedMs} ms. Its progress is saved - call baton_resume with run_id to wait for the rest, or baton_status to look.`,
    details: { jobId: run.id, canResume: true, wasResumed, durationMs: waitedMs, timeoutMs: replyWithinMs },
    resume: { tool: 'baton_resume', arguments: { run_id: run.id } },
  };
  const text = [
    `${run.name} is still running (run ${run.id}); ${findings.length} finding(s) so far.`,
    findings.length > 0 ? json(findings) : '',
    `Call baton_resume {"run_id": "${run.id}"} to wait for the result, or baton_status to check on it.`,
  ]
    .filter(Boolean)
    .join('\n');
  return answer(structured, text);
}

/** The run waits for a person to choose: the question, the menu, and how to answer. */
export function decisionAnswer(run: RunRecord, decisions: readonly OpenDecision[]): ToolAnswer {
  const d = decisions[0];
  const choices = d?.request.choices.map((c) => ({ id: c.id, label: c.label })) ?? [];
  return answer(
    {
      run_id: run.id,
      task: run.name,
      status: 'input_required',
      question: d?.request.message ?? '',
      choices,
      decision_run_id: d?.runId ?? run.id,
      answer_with: {
        tool: 'baton_decide',
        arguments: { run_id: d?.runId ?? run.id, choice: choices[0]?.id ?? '' },
      },
    },
    `${d?.request.message ?? `${run.name} needs a decision.`}\nAnswer with baton_decide {"run_id": "${d?.runId ?? run.id}", "choice": one of ${choices.map((c) => c.id).join(', ')}}.`,
  );
}

/** A tool call with a `schedule`: acknowledged at once with the resolved delivery time. */
export function scheduledAnswer(run: RunRecord, schedule: RunSchedule): ToolAnswer {
  return answer(
    {
      run_id: run.id,
      task: run.name,
      status: 'scheduled',
      deliver_at: schedule.iso,
      delay_ms: schedule.delayMs,
      schedule: { text: schedule.text, timezone: schedule.timezone, language: schedule.language },
    },
    `Accepted: ${run.name} runs now and its result is delivered at ${schedule.iso} (${schedule.timezone}, "${schedule.text}"). Call baton_resume {"run_id": "${run.id}"} then to collect it, or baton_status to check.`,
  );
}

/** A tool call the arguments of which were refused before anything was stored. */
export function refusedAnswer(tool: string, code: string, message: string): ToolAnswer {
  return answer({ task: tool, status: 'refused', error: { code, message } }, `${code}: ${message}`, true);
}

/** baton_status: where the run is, without waiting. */
export function statusAnswer(
  run: RunRecord,
  partials: readonly PartialRecord[],
  lastCheckpoint: Record<string, unknown> | undefined,
): ToolAnswer {
  const findings = findingsOf(partials);
  const structured = {
    run_id: run.id,
    task: run.name,
    status: run.status,
    ...(run.waitReason ? { waiting: run.waitReason } : {}),
    attempt: run.attempt,
    findings: findings.length,
    ...(lastCheckpoint ? { checkpoint: lastCheckpoint } : {}),
    ...(run.deadlineAt !== null ? { deadline: new Date(run.deadlineAt).toISOString() } : {}),
  };
  const cp = lastCheckpoint as
    | { progress_percentage?: number; time_assessment?: { time_status?: string } }
    | undefined;
  return answer(
    structured,
    `${run.name} (run ${run.id}) is ${run.status}${run.waitReason ? ` (waiting: ${run.waitReason})` : ''}, attempt ${run.attempt}, ${findings.length} finding(s)${cp?.progress_percentage !== undefined ? `, ${cp.progress_percentage}% done` : ''}${cp?.time_assessment?.time_status ? `, ${cp.time_assessment.time_status}` : ''}.`,
  );
}
