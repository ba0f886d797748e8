/** The demo flow: three researchers in parallel, then an aggregator that depends on all three. */
import { defineFlow } from '../../src/index.ts';
import { academicResearcher, aggregator, communityListener, githubWatcher } from './tasks.ts';
import { draftDigest, renderChart } from './tools.ts';

const output = (task: string, path: string) => ({
  data_reference: { ref_type: 'task_output', task_id: task, path },
});

export interface DemoInput {
  topic: string;
  readMs?: number;
}

export const researchFlow = defineFlow({
  name: 'research-demo',
  output: 'report',
  steps: [
    {
      id: 'papers',
      task: academicResearcher,
      input: (i: DemoInput) => ({ topic: i.topic, readMs: i.readMs ?? 150 }),
    },
    {
      id: 'repos',
      task: githubWatcher,
      input: (i: DemoInput) => ({ topic: i.topic, readMs: i.readMs ?? 220 }),
    },
    {
      id: 'discussions',
      task: communityListener,
      input: (i: DemoInput) => ({ topic: i.topic, readMs: i.readMs ?? 90 }),
    },
    {
      // No dependsOn needed: referencing the researchers' outputs makes this step wait for them.
      id: 'report',
      task: aggregator,
      input: (i: DemoInput) => ({
        topic: i.topic,
        papers: output('papers', '$.findings'),
        repos: output('repos', '$.findings'),
        discussions: output('discussions', '$.findings'),
        papers_keywords: output('papers', '$.keywords'),
        repos_keywords: output('repos', '$.keywords'),
        discussions_keywords: output('discussions', '$.keywords'),
        known: {
          data_reference: {
            ref_type: 'db_query',
            table: 'knowledge_atoms',
            conditions: [{ field: 'atom_type', operator: 'eq', value: 'claim' }],
            select: ['atom_id', 'content', 'confidence'],
            order_by: { field: 'confidence', direction: 'desc' },
            limit: 5,
          },
        },
        history: {
          data_reference: {
            ref_type: 'db_query',
            table: 'execution_logs',
            conditions: [{ field: 'event', operator: 'eq', value: 'attempt:timed_out' }],
            select: ['task', 'event', 'at'],
            limit: 20,
          },
        },
      }),
    },
    // Scheduled tool calls: each starts once its input exists; the result is delivered at the stated time.
    { id: 'digest', task: draftDigest, input: { report: output('report', '$') }, schedule: 'in 6 seconds' },
    {
      id: 'chart',
      task: renderChart,
      input: { findings: output('papers', '$.findings') },
      schedule: '5秒后',
    },
  ],
});

export default researchFlow;
