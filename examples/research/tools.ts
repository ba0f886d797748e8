/**
 * The demo's scheduled tool calls (protocol 004). Both start as soon as their input exists; their
 * results reach the user at the time the plan states: the digest is ready early and held until
 * then; the chart is slow, so an in-progress notice goes out first.
 */
import { defineTool, SCHEDULE_JSON_SCHEMA } from '../../src/index.ts';

interface Claim {
  score: number;
  text: string;
  from: string;
}

export const draftDigest = defineTool({
  name: 'draft_digest',
  description: 'Writes a three-line digest of the strongest claims.',
  inputSchema: {
    type: 'object',
    properties: { report: { type: 'object' }, schedule: SCHEDULE_JSON_SCHEMA },
    required: ['report'],
  },
  handler: async (args: { report: { topClaims?: Claim[] } }, ctx) => {
    await ctx.delay(300);
    const claims = (args.report.topClaims ?? []).slice(0, 3);
    return { digest: claims.map((c, i) => `${i + 1}. ${c.text}`) };
  },
});

export const renderChart = defineTool({
  name: 'render_chart',
  description: 'Renders a chart of claim scores by source.',
  inputSchema: {
    type: 'object',
    properties: { findings: { type: 'array' }, schedule: SCHEDULE_JSON_SCHEMA },
    required: ['findings'],
  },
  handler: async (args: { findings: Array<{ score: number }> }, ctx) => {
    // Rendering is slow: longer than the user said they would wait.
    await ctx.delay(3_500);
    const buckets = [0.5, 0.6, 0.7, 0.8, 0.9].map(
      (b) => args.findings.filter((f) => f.score >= b && f.score < b + 0.1).length,
    );
    return { chart: buckets.map((n, i) => `${(0.5 + i / 10).toFixed(1)} ${'█'.repeat(n)} ${n}`) };
  },
});
