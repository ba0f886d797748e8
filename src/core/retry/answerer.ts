/**
 * Who answered a decision, as a typed value. The policy answers when a run is unattended and when
 * nobody answered before the decision timeout; both must behave the same (a person's "abandon" ends
 * the whole flow, the policy's only the step), so the engine branches on `kind`, never on a display
 * string — a caller of `baton.decide(id, answer, by)` may call itself anything, even "policy".
 *
 * Stored form: `decision:made` events and a run's decision history carry `answeredBy` (this value)
 * beside `by` (its readable label, the field readers had before). Rows written before `answeredBy`
 * existed carry only `by`; `answererOf` decodes them from the labels the engine wrote then.
 */

export type Answerer =
  | { kind: 'policy'; trigger: 'unattended' | 'decision_timeout' }
  | { kind: 'person'; name: string };

const POLICY_LABELS = {
  unattended: 'policy',
  decision_timeout: 'policy (decision timeout)',
} as const;

/** The readable `by` of an answer: the person's name, or the policy's label. */
export function answererLabel(a: Answerer): string {
  return a.kind === 'person' ? a.name : POLICY_LABELS[a.trigger];
}

function isAnswerer(v: unknown): v is Answerer {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as { kind?: unknown; trigger?: unknown; name?: unknown };
  if (o.kind === 'person') return typeof o.name === 'string';
  return o.kind === 'policy' && (o.trigger === 'unattended' || o.trigger === 'decision_timeout');
}

/**
 * Who answered, from a `decision:made` event's data or a decision history entry. Old rows (only
 * `by`) are read by the labels the engine wrote: `policy` and `policy (decision timeout)` were the
 * policy's; any other name a person's.
 */
export function answererOf(entry: { by?: unknown; answeredBy?: unknown }): Answerer {
  if (isAnswerer(entry.answeredBy)) return entry.answeredBy;
  const by = typeof entry.by === 'string' ? entry.by : 'unknown';
  if (by === POLICY_LABELS.unattended) return { kind: 'policy', trigger: 'unattended' };
  if (by === POLICY_LABELS.decision_timeout) return { kind: 'policy', trigger: 'decision_timeout' };
  return { kind: 'person', name: by };
}
