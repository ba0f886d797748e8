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
          await ctx.delay(input.readMs);
          return analyzeItem(item, source);
        },
        {
          name: `read ${item.id}`,
          cheap: async () => {
            await ctx.delay(Math.round(input.readMs / 3));
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
  // The protocols' research preset: checkpoints every 3 papers (the academic-researcher profile).
  research: {},
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
  research: { mode: 'codebase' },
  budget: '20s',
  time: demoTime,
  run: (input, ctx) => research('repos', input, ctx),
});

export const communityListener = defineTask({
  name: 'community-listener',
  input: researcherInput,
  kind: 'researcher',
  research: { mode: 'docs' },
  budget: '20s',
  time: demoTime,
  run: (input, ctx) => research('discussions', input, ctx),
});

type Transfer = { transfer_mode: string } | undefined;

/** Claims from whatever transfer arrived: the full list, a summary of it, or a reference to fetch. */
async function claimsFrom(ctx: TaskContext, transfer: Transfer): Promise<Claim[]> {
  if (!transfer) return [];
  const data = await ctx.fetch(transfer);
  const items = Array.isArray(data) ? data : ((data as { items_summary?: unknown[] })?.items_summary ?? []);
  return (items as Array<Claim & { text_summary?: string }>).map((c) => ({
    ...c,
    text: c.text ?? c.text_summary ?? '',
  }));
}

/**
 * Reads the researchers' findings through data references planned into its context budget: some
 * arrive whole, some summarized, some as a reference it fetches from on demand (the full text of
 * just the claims it keeps). Also reads the knowledge base and the run history through db_query.
 */
export const aggregator = defineTask({
  name: 'aggregator',
  input: z
    .object({ topic: z.string(), top: z.number().int().min(1).max(50).default(6) })
    .catchall(z.unknown()),
  context: { agent: 'Knowledge_Vault', taskType: 'Strategic_Critic', dataTypes: { repos: 'relation_graph' } },
  run: async (input, ctx) => {
    const get = (k: string) => input[k] as Transfer;
    const transfers = Object.fromEntries(
      ['papers', 'repos', 'discussions'].map((k) => [k, get(k)?.transfer_mode ?? 'missing']),
    );
    const [papers, repos, discussions] = await Promise.all(
      ['papers', 'repos', 'discussions'].map((k) => claimsFrom(ctx, get(k))),
    );
    const all = [...(papers ?? []), ...(repos ?? []), ...(discussions ?? [])];
    const ranked = all
      .filter((c) => c.kind === 'claim')
      .sort((a, b) => b.score - a.score || a.item.localeCompare(b.item));
    // A summary shortened the texts: fetch the whole text of just the claims that made the cut.
    const top = await Promise.all(
      ranked.slice(0, input.top).map(async (c) => {
        if (!c.text.endsWith('…')) return c;
        const full = (await ctx.fetch({
          data_reference: {
            ref_type: 'task_output',
            task_id: c.source,
            path: `$.findings[?(@.item=='${c.item}')]`,
          },
        })) as Claim[];
        return full.find((f) => f.text.startsWith(c.text.slice(0, 20))) ?? c;
      }),
    );
    const keywords = Object.fromEntries(
      await Promise.all(
        ['papers', 'repos', 'discussions'].map(async (k) => [
          k,
          ((await ctx.fetch(get(`${k}_keywords`))) ?? []) as string[],
        ]),
      ),
    );
    const known = ((await ctx.fetch(get('known'))) ?? []) as Array<{
      atom_id: string;
      content: string;
      confidence: number;
    }>;
    const timeouts = ((await ctx.fetch(get('history'))) ?? []) as unknown[];
    return {
      topic: input.topic,
      sources: Object.fromEntries(
        Object.entries(ctx.dependencies).map(([k, d]) => [
          k,
          (d.output as ResearchOutput | null)?.itemsAnalyzed ?? 0,
        ]),
      ),
      incompleteSources: Object.entries(ctx.dependencies)
        .filter(([, d]) => d.incomplete)
        .map(([k]) => k),
      transfers,
      topClaims: top.map((c) => ({ score: c.score, text: c.text, from: `${c.source}/${c.item}` })),
      gaps: all.filter((c) => c.kind === 'gap').map((c) => `${c.item}: ${c.text}`),
      themes: sharedThemes(keywords).slice(0, 8),
      answeredPains: matchPainToEvidence(
        all.filter((c) => c.kind === 'pain_point'),
        ranked,
      ).slice(0, 5),
      knownAtoms: known.slice(0, 3).map((a) => `${a.atom_id} (${a.confidence}): ${a.content}`),
      timeoutsInHistory: timeouts.length,
    };
  },
});
