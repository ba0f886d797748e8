/** The demo flow: three researchers in parallel, then an aggregator that depends on all three. */
import { defineFlow } from '../../src/index.ts';
import { academicResearcher, aggregator, communityListener, githubWatcher } from './tasks.ts';

export interface DemoInput {
  topic: string;
  readMs?: number;
}

export const researchFlow = defineFlow<DemoInput>({
  name: 'research-demo',
  output: 'report',
  steps: [
    { id: 'papers', task: academicResearcher, input: (i) => ({ topic: i.topic, readMs: i.readMs ?? 150 }) },
    { id: 'repos', task: githubWatcher, input: (i) => ({ topic: i.topic, readMs: i.readMs ?? 220 }) },
    {
      id: 'discussions',
      task: communityListener,
      input: (i) => ({ topic: i.topic, readMs: i.readMs ?? 90 }),
    },
    {
      id: 'report',
      task: aggregator,
      input: (i) => ({ topic: i.topic }),
      dependsOn: ['papers', 'repos', 'discussions'],
    },
  ],
});

export default researchFlow;
