/**
 * The request bodies and queries of the HTTP API, as zod schemas, and the one place their issues
 * become a 400 that names the field. Unknown fields are refused so a typo ("taks") is not ignored.
 */
import { z } from 'zod';
import { BatonError, RunStatuses, TimeStatuses, WaitReasons } from '../core/index.ts';

const executionMode = z.enum(['sync', 'async']);
const duration = z.union([z.number().nonnegative(), z.string().min(1)]);
const positiveMs = z.number().int().positive();

export const StartBody = z.strictObject({
  /** A registered task's name. */
  task: z.string().min(1).optional(),
  /** A registered flow's name, or a JSON plan (`{ steps: [...] }` or `{ plan: { steps } }`). */
  flow: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  input: z.unknown().optional(),
  /** sync: wait for the result (or a resumable 408); async: 202 with the job id at once. */
  mode: executionMode.optional(),
  id: z.string().min(1).optional(),
  budget: duration.optional(),
  fast: z.boolean().optional(),
  /** The research mode (codebase, docs, external, dual, …); `mode` is the execution mode. */
  researchMode: z.string().min(1).optional(),
  /** How long a sync request waits, capped by the server's maximum. */
  timeoutMs: positiveMs.optional(),
  /** The protocol's resume form: continue this job from its checkpoint. */
  resumeJobId: z.string().min(1).optional(),
});
export type StartBody = z.infer<typeof StartBody>;

/** The request's own fields of a flat 003 body (`POST /tasks/:name`); the rest is the task's input. */
export const FlatRequest = z.strictObject({
  mode: executionMode.optional(),
  timeoutMs: positiveMs.optional(),
  resumeJobId: z.string().min(1).optional(),
});
export type FlatRequest = z.output<typeof FlatRequest>;

export const ResumeBody = z.strictObject({
  mode: executionMode.optional(),
  timeoutMs: positiveMs.optional(),
});
export type ResumeBody = z.infer<typeof ResumeBody>;

export const CancelBody = z.strictObject({ reason: z.string().max(1000).optional() });
export type CancelBody = z.output<typeof CancelBody>;

const intText = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'expected an integer').transform(Number).pipe(z.number().int().min(min).max(max));

/** An instant in a query: epoch milliseconds or an ISO 8601 date-time with a zone. */
const instantText = z
  .string()
  .refine((v) => /^\d+$/.test(v) || /^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]\d\d:?\d\d))?$/.test(v), {
    message: 'expected epoch milliseconds or an ISO 8601 date-time like 2026-11-25T09:00:00Z',
  })
  .transform((v) => (/^\d+$/.test(v) ? Number(v) : Date.parse(v)))
  .pipe(z.number().int().nonnegative());

/** Which runs: the filters the runs list and bulk actions share. */
const runFilterFields = {
  status: z.enum(RunStatuses).optional(),
  waitReason: z.enum(WaitReasons).optional(),
  name: z.string().min(1).optional(),
  budgetStatus: z.enum(TimeStatuses).optional(),
};

export const ListQuery = z.strictObject({
  ...runFilterFields,
  createdAfter: instantText.optional(),
  createdBefore: instantText.optional(),
  limit: intText(1, 1000).optional(),
  cursor: z.string().min(1).optional(),
});
export type ListQuery = z.output<typeof ListQuery>;
export type RunFilter = Omit<ListQuery, 'limit' | 'cursor'>;

const instantBody = z.union([z.number().int().nonnegative(), instantText]);

export const BulkBody = z.strictObject({
  /** These runs, or every run the filter selects (one of the two). */
  ids: z.array(z.string().min(1)).min(1).max(10_000).optional(),
  filter: z
    .strictObject({
      ...runFilterFields,
      createdAfter: instantBody.optional(),
      createdBefore: instantBody.optional(),
    })
    .optional(),
  /** Count what would be touched, change nothing. */
  dryRun: z.boolean().optional(),
  reason: z.string().max(1000).optional(),
});
export type BulkBody = z.infer<typeof BulkBody>;

export const TimelineQuery = z.strictObject({
  /** Only these event types (comma-separated; a prefix ending in ":" keeps a family). */
  types: z.string().min(1).optional(),
  /** At most this many events, from the first; `truncated` says when there were more. @default 10000 */
  limit: intText(1, 50_000).optional(),
});
export type TimelineQuery = z.output<typeof TimelineQuery>;

export const PageQuery = z.strictObject({
  limit: intText(1, 1000).optional(),
  cursor: z.string().min(1).optional(),
});
export type PageQuery = z.output<typeof PageQuery>;

export const DeliveriesQuery = z.strictObject({
  /** upcoming: not yet delivered; all: also delivered ones, newest first. @default upcoming */
  state: z.enum(['upcoming', 'all']).optional(),
  limit: intText(1, 1000).optional(),
  cursor: z.string().min(1).optional(),
});
export type DeliveriesQuery = z.output<typeof DeliveriesQuery>;

export const ModeQuery = z.strictObject({ mode: executionMode.optional() });
export type ModeQuery = z.output<typeof ModeQuery>;

export const AllEventsQuery = z.strictObject({
  after: intText(0, Number.MAX_SAFE_INTEGER).optional(),
  types: z.string().min(1).optional(),
});
export type AllEventsQuery = z.output<typeof AllEventsQuery>;

export const EventsQuery = z.strictObject({
  follow: z.enum(['0', '1', 'true', 'false']).optional(),
  after: intText(0, Number.MAX_SAFE_INTEGER).optional(),
});
export type EventsQuery = z.output<typeof EventsQuery>;

/**
 * The bodies as a client writes them (the schemas' input types): `baton/client` builds its requests
 * typed by these, so a field renamed here fails the client's type check instead of drifting.
 */
export type StartRequestBody = z.input<typeof StartBody>;
export type ResumeRequestBody = z.input<typeof ResumeBody>;
export type CancelRequestBody = z.input<typeof CancelBody>;
export type BulkRequestBody = z.input<typeof BulkBody>;

/** Parses `value` or throws INVALID_INPUT naming each bad field as `<where>.<path>`. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const path = [where, ...issue.path.map(String), ...keys.slice(0, 1)].join('.');
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown field${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`
        : issue.message;
    return { field: path, message };
  });
  const first = issues[0] ?? { field: where, message: 'invalid' };
  throw new BatonError('INVALID_INPUT', issues.map((i) => `${i.field}: ${i.message}`).join('; '), {
    data: { field: first.field, issues },
  });
}
