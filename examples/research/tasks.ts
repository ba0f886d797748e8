/**
 * The demo's tasks: three researchers that read a corpus item by item (each item a memoized step,
 * a checkpoint every few items — the protocol's intervals: papers every 3, repositories every 2,
 * discussions every 5) and an aggregator that merges their findings.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTask, type TaskContext } from '../../src/index.ts';
import { analyzeItem, type Claim, type CorpusItem, matchPainToEvidence, sharedThemes } from './analyze.ts';

const corpus = (name: string): CorpusItem[] =>
  JSON.parse(readFileSync(new URL(`./corpus/${name}.json`, import.meta.url), 'utf8')) as CorpusItem[];

const researcherInput = z.object({
  topic: z.string().min(1),
  /** Simulated reading time per item, so the demo can be watched (and killed) mid-run. */
  readMs: z.number().int().min(0).max(10_000).default(150),
});

export interface ResearchOutput {
  source: string;
  itemsAnalyzed: number;
  findings: Claim[];
  keywords: string[];
}

interface ResearchState {
  next: number;
  findings: Claim[];
  keywords: string[];
}

async function research(source: string, input: z.infer<typeof researcherInput>, ctx: TaskContext) {
  const items = corpus(source);
  const saved = ctx.lastCheckpoint?.state as ResearchState | undefined;
  const state: ResearchState = saved ?? { next: 0, findings: [], keywords: [] };
  if (saved) ctx.log.info({ next: saved.next }, 'resuming from checkpoint');
  for (let i = state.next; i < items.length; i++) {
    const item = items[i] as CorpusItem;
    const result = await ctx.step(`${source}:${item.id}`, async () => {
      // A deep read when there is time; only the first two sentences when the budget runs short.
      const analysis = await ctx.tool(
        'deep_analysis',
        async () => {
          await ctx.sleep(input.readMs);
          return analyzeItem(item, source);
        },
        {
          name: `read ${item.id}`,
          cheap: async () => {
            await ctx.sleep(Math.round(input.readMs / 3));
            return {
              ...analyzeItem({ ...item, text: item.text.split('. ').slice(0, 2).join('. ') }, source),
              quick: true,
            };
          },
        },
      );
      return analysis ?? { item: item.id, claims: [], keywords: [] };
    });
    state.findings.push(...result.claims);
    state.keywords.push(...result.keywords);
    state.next = i + 1;
    if (result.claims.length > 0) await ctx.partial(...result.claims);
    ctx.progress(i + 1, items.length);
    // The protocol's per-agent intervals: every 3 papers, 2 repositories, 5 discussions.
    if (ctx.shouldCheckpoint(i + 1) || i + 1 === items.length)
      await ctx.checkpoint(state, { itemsAnalyzed: i + 1, itemsTotal: items.length });
  }
  return {
    source,
    itemsAnalyzed: items.length,
    findings: state.findings,
    keywords: [...new Set(state.keywords)],
  } satisfies ResearchOutput;
}

/** The demo's budget is seconds, not minutes, so its time thresholds are scaled down with it. */
const demoTime = { thresholds: { criticalSeconds: 4, warningSeconds: 8, warningFraction: 0.25 } };

/**
 * Deliberately slow: its first attempt (1.2 s) cannot read 12 papers at 150 ms each, so it times
 * out with partial findings, then retries after 1 s with twice the timeout, from its checkpoint.
 */
export const academicResearcher = defineTask({
  name: 'academic-researcher',
  input: researcherInput,
  kind: 'researcher',
  timeout: '1200ms',
  retry: { backoff: ['1s', '2s'] },
  budget: '20s',
  time: demoTime,
  run: (input, ctx) => research('papers', input, ctx),
});

export const githubWatcher = defineTask({
  name: 'github-watcher',
  input: researcherInput,
  kind: 'researcher',
  mode: 'codebase',
  budget: '20s',
  time: demoTime,
  run: (input, ctx) => research('repos', input, ctx),
});

export const communityListener = defineTask({
  name: 'community-listener',
  input: researcherInput,
  kind: 'researcher',
  mode: 'docs',
  budget: '20s',
  time: demoTime,
  run: (input, ctx) => research('discussions', input, ctx),
});

export const aggregator = defineTask({
  name: 'aggregator',
  input: z.object({ topic: z.string(), top: z.number().int().min(1).max(50).default(6) }),
  run: async ({ topic, top }, ctx) => {
    const outputs = Object.entries(ctx.dependencies).map(([step, d]) => ({
      step,
      incomplete: d.incomplete,
      ...(d.output as ResearchOutput),
    }));
    const all = outputs.flatMap((o) => o.findings ?? []);
    const claims = all
      .filter((c) => c.kind === 'claim')
      .sort((a, b) => b.score - a.score || a.item.localeCompare(b.item));
    return {
      topic,
      sources: Object.fromEntries(outputs.map((o) => [o.source, o.itemsAnalyzed])),
      incompleteSources: outputs.filter((o) => o.incomplete).map((o) => o.step),
      topClaims: claims
        .slice(0, top)
        .map((c) => ({ score: c.score, text: c.text, from: `${c.source}/${c.item}` })),
      gaps: all.filter((c) => c.kind === 'gap').map((c) => `${c.item}: ${c.text}`),
      themes: sharedThemes(Object.fromEntries(outputs.map((o) => [o.source, o.keywords ?? []]))).slice(0, 8),
      answeredPains: matchPainToEvidence(
        all.filter((c) => c.kind === 'pain_point'),
        claims,
      ).slice(0, 5),
    };
  },
});
