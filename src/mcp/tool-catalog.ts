/**
 * Baton tasks as MCP tool descriptions: a tool's own JSON Schema (with `schedule` when it declares
 * one), a task's zod input as JSON Schema, and Baton's own tools to look at, resume and answer runs.
 */
import { z } from 'zod';
import type { TaskDefinition } from '../runtime/index.ts';
import { isTool } from '../tools/index.ts';

export interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  /** Task tools may run as MCP tasks; Baton's own tools answer at once (absent = forbidden). */
  execution?: { taskSupport: 'optional' };
}

export interface CatalogEntry {
  tool: McpTool;
  task: TaskDefinition;
  /** The task's input is not an object: MCP arguments carry it as `{ input }`. */
  wrapped: boolean;
}

const RUN_ID = { type: 'string', description: 'The run id a Baton tool call answered with (run_id).' };

export const BATON_TOOLS: readonly McpTool[] = [
  {
    name: 'baton_status',
    title: 'Status of a Baton run',
    description:
      'Where a run started by a tool call is now: status, attempt, findings so far, last checkpoint and time status. Does not wait.',
    inputSchema: {
      type: 'object',
      properties: { run_id: RUN_ID },
      required: ['run_id'],
      additionalProperties: false,
    },
  },
  {
    name: 'baton_resume',
    title: 'Wait for (or resume) a Baton run',
    description:
      'Continues a tool call that answered with status "timeout": waits for the run again (resuming it from its last checkpoint if it stopped) and answers with the result, or with more partial findings if it is still not done.',
    inputSchema: {
      type: 'object',
      properties: { run_id: RUN_ID },
      required: ['run_id'],
      additionalProperties: false,
    },
  },
  {
    name: 'baton_decide',
    title: 'Answer a Baton run that asks',
    description:
      'Answers a run that waits for a decision (status "input_required") with one of the choices it offered, then waits for the run.',
    inputSchema: {
      type: 'object',
      properties: {
        run_id: RUN_ID,
        choice: { type: 'string', description: 'One of the choice ids the question offered.' },
        mode: { type: 'string', description: 'For the "different_mode" choice: the mode to retry in.' },
      },
      required: ['run_id', 'choice'],
      additionalProperties: false,
    },
  },
];

function inputSchemaOf(task: TaskDefinition): { schema: McpTool['inputSchema']; wrapped: boolean } {
  if (isTool(task)) return { schema: { ...task.tool.inputSchema, type: 'object' }, wrapped: false };
  if (!task.inputSchema) return { schema: { type: 'object' }, wrapped: false };
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(task.inputSchema, { io: 'input', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
  } catch {
    return { schema: { type: 'object' }, wrapped: false };
  }
  delete schema.$schema;
  if (schema.type === 'object') return { schema: schema as McpTool['inputSchema'], wrapped: false };
  return { schema: { type: 'object', properties: { input: schema }, required: ['input'] }, wrapped: true };
}

export function buildCatalog(tasks: readonly TaskDefinition[]): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>();
  for (const task of tasks) {
    const { schema, wrapped } = inputSchemaOf(task);
    const own = isTool(task) ? task.tool.description : undefined;
    const schedule = isTool(task) && task.tool.acceptsSchedule;
    catalog.set(task.name, {
      task,
      wrapped,
      tool: {
        name: task.name,
        description: [
          own ?? `Runs the Baton task "${task.name}".`,
          'Durable: if it is not done before the client times out, the answer carries the partial findings and a run_id for baton_resume.',
          schedule
            ? 'Accepts `schedule` ("in 2 minutes", "明天早上9点", ISO 8601): acknowledged at once with the delivery time.'
            : '',
        ]
          .filter(Boolean)
          .join(' '),
        inputSchema: schema,
        execution: { taskSupport: 'optional' },
      },
    });
  }
  return catalog;
}
