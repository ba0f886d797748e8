/**
 * Priority trimming, protocol 002 §6.3, with L the context limit:
 *
 *   sort the items by level (1 → 4, stable), current = 0, then for each item d:
 *     level 1 (critical):      always added; compressed if adding it would exceed L
 *     level 2 (important):     added if current + size(d) < 0.8·L, else added summarized
 *     level 3 (supplementary): added if current + size(d) < 0.9·L, else skipped
 *     level 4 (optional):      added if current + size(d) < 0.95·L, else skipped
 *     current += size of what was added
 *
 * Where the protocol leaves a number open:
 * - "Exceed L" for a level-1 item counts the level-1 items after it: every one of them must be
 *   included ("不可省略"), so an early item may not take the room a later one needs. The target is
 *   the room left after the later items that cannot shrink (instructions), shared with the later
 *   shrinkable ones in proportion to size (or, if larger, that room minus their full size).
 * - A summary aims at `summaryRatio` of the item (the summary strategy's ratio), capped by the room
 *   below 0.8·L; when that room is under `minSummaryTokens`, by the room below L instead.
 * - The hooks decide how to shrink (filter by priority, summarize, reference) and report the size
 *   they reached, which may still be above the target; the caller reports whether the end result is
 *   within the limit.
 */

import type { PriorityLevel } from './priority.ts';

export interface TrimItem {
  name: string;
  priority: PriorityLevel;
  tokens: number;
  /** Whether compress/summarize can make it smaller at all. */
  reducible: boolean;
}

export type TrimOutcome = 'kept' | 'compressed' | 'summarized' | 'skipped';

export interface TrimDecision {
  name: string;
  priority: PriorityLevel;
  outcome: TrimOutcome;
  tokensBefore: number;
  tokensAfter: number;
}

export interface TrimHooks {
  /** Level 1 over the limit: shrink `name` to at most `target` tokens; resolves to its new size. */
  compress(name: string, target: number): Promise<number>;
  /** Level 2 past 0.8·L: summarize `name` to at most `target` tokens; resolves to its new size. */
  summarize(name: string, target: number): Promise<number>;
}

export interface TrimOptions {
  /** Fractions of L for levels 2, 3 and 4. @default { 2: 0.8, 3: 0.9, 4: 0.95 } */
  thresholds?: { 2: number; 3: number; 4: number };
  /** @default 0.3 */
  summaryRatio?: number;
  /** @default 64 */
  minSummaryTokens?: number;
}

export const DEFAULT_TRIM_THRESHOLDS = { 2: 0.8, 3: 0.9, 4: 0.95 } as const;

export async function trimByPriority(
  items: readonly TrimItem[],
  limit: number,
  hooks: TrimHooks,
  options: TrimOptions = {},
): Promise<{ decisions: TrimDecision[]; finalTokens: number }> {
  const thresholds = options.thresholds ?? DEFAULT_TRIM_THRESHOLDS;
  const ratio = options.summaryRatio ?? 0.3;
  const minSummary = options.minSummaryTokens ?? 64;
  const sorted = items
    .map((item, order) => ({ item, order }))
    .sort((a, b) => a.item.priority - b.item.priority || a.order - b.order);
  const decisions: TrimDecision[] = [];
  let current = 0;
  for (let idx = 0; idx < sorted.length; idx++) {
    const d = sorted[idx]!.item;
    const decide = (outcome: TrimOutcome, tokensAfter: number) => {
      decisions.push({ name: d.name, priority: d.priority, outcome, tokensBefore: d.tokens, tokensAfter });
      current += tokensAfter;
    };
    switch (d.priority) {
      case 1: {
        const later = sorted.slice(idx + 1).filter((s) => s.item.priority === 1);
        const laterFixed = later.filter((s) => !s.item.reducible).reduce((n, s) => n + s.item.tokens, 0);
        const laterShrinkable = later.filter((s) => s.item.reducible).reduce((n, s) => n + s.item.tokens, 0);
        if (!d.reducible || current + d.tokens + laterFixed + laterShrinkable <= limit) {
          decide('kept', d.tokens);
          break;
        }
        const room = Math.max(0, limit - current - laterFixed);
        const share = Math.floor((room * d.tokens) / (d.tokens + laterShrinkable));
        const target = Math.max(share, room - laterShrinkable);
        decide('compressed', await hooks.compress(d.name, target));
        break;
      }
      case 2: {
        if (current + d.tokens < thresholds[2] * limit || !d.reducible) {
          decide('kept', d.tokens);
          break;
        }
        const aim = Math.ceil(d.tokens * ratio);
        const below = Math.floor(thresholds[2] * limit - current);
        const target =
          below >= minSummary
            ? Math.min(aim, below)
            : Math.max(0, Math.min(aim, Math.floor(limit - current)));
        decide('summarized', await hooks.summarize(d.name, target));
        break;
      }
      case 3:
      case 4:
        if (current + d.tokens < thresholds[d.priority] * limit) decide('kept', d.tokens);
        else decide('skipped', 0);
        break;
    }
  }
  return { decisions, finalTokens: current };
}
