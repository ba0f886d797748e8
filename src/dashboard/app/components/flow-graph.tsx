/** A flow's steps as a graph coloured by status: columns by dependency depth, edges to dependents. */
import type { RunRow } from '../../../http/index.ts';
import { href } from '../router.ts';

export function FlowGraph({ steps }: { steps: RunRow[] }) {
  // dependsOn names step ids ("papers") or run ids ("<flow>.papers"): index both.
  const byId = new Map<string, RunRow>();
  for (const s of steps) {
    byId.set(s.id, s);
    if (s.stepId) byId.set(s.stepId, s);
  }
  const depth = new Map<string, number>();
  const depthOf = (s: RunRow, seen = new Set<string>()): number => {
    const known = depth.get(s.id);
    if (known !== undefined) return known;
    if (seen.has(s.id)) return 0;
    seen.add(s.id);
    const d =
      Math.max(-1, ...s.dependsOn.map((id) => (byId.has(id) ? depthOf(byId.get(id) as RunRow, seen) : -1))) +
      1;
    depth.set(s.id, d);
    return d;
  };
  const columns: RunRow[][] = [];
  for (const s of steps) {
    const d = depthOf(s);
    columns[d] = [...(columns[d] ?? []), s];
  }
  const BOX_W = 150;
  const BOX_H = 38;
  const GAP_X = 50;
  const GAP_Y = 14;
  const pos = new Map<string, { x: number; y: number }>();
  for (const [c, col] of columns.entries())
    for (const [r, s] of (col ?? []).entries())
      pos.set(s.id, { x: 6 + c * (BOX_W + GAP_X), y: 6 + r * (BOX_H + GAP_Y) });
  const width = columns.length * (BOX_W + GAP_X);
  const height = Math.max(...columns.map((c) => c?.length ?? 0)) * (BOX_H + GAP_Y) + 6;
  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG drawing of linked steps; a fieldset cannot hold it
    <svg
      class="flow-graph"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      role="group"
      aria-label={`Flow with ${steps.length} steps`}
    >
      {steps.flatMap((s) =>
        s.dependsOn.map((dep) => {
          const a = pos.get(byId.get(dep)?.id ?? dep);
          const b = pos.get(s.id);
          if (!a || !b) return null;
          return (
            <line
              key={`${dep}->${s.id}`}
              class="edge"
              x1={a.x + BOX_W}
              y1={a.y + BOX_H / 2}
              x2={b.x}
              y2={b.y + BOX_H / 2}
            />
          );
        }),
      )}
      {steps.map((s) => {
        const p = pos.get(s.id) as { x: number; y: number };
        return (
          <a key={s.id} href={href(`/runs/${encodeURIComponent(s.id)}`)}>
            <rect class={`node s-${s.status}`} x={p.x} y={p.y} width={BOX_W} height={BOX_H} rx={6} />
            <text x={p.x + 8} y={p.y + 16}>
              {(s.stepId ?? s.name).slice(0, 20)}
            </text>
            <text x={p.x + 8} y={p.y + 31} class="sub">
              {s.status}
              {s.waitReason ? `: ${s.waitReason}` : ''}
            </text>
          </a>
        );
      })}
    </svg>
  );
}
