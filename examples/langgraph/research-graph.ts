/**
 * A LangGraph.js research graph whose checkpoints live in Baton's SQLite store (`baton/langgraph`).
 * It runs offline: the "model" is a scripted function. Each source read is a superstep, so each
 * is a durable checkpoint; a human approves the report through LangGraph's interrupt.
 *
 *   npx tsx examples/langgraph/research-graph.ts --crash-after 3   # SIGKILLs itself after 3 sources
 *   npx tsx examples/langgraph/research-graph.ts                   # resumes the thread, asks for approval
 *   npx tsx examples/langgraph/research-graph.ts --approve yes     # answers the interrupt, writes the report
 *   npm run baton -- show research-1                               # the thread's checkpoints
 *
 * Options: --db <file> (default ./langgraph.db), --thread <id> (default research-1).
 * Retention: threads expire 7 days after their last write; only the newest 20 checkpoints are kept.
 */
import { parseArgs } from 'node:util';
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { BatonSaver } from '../../src/langgraph/index.ts';

const SOURCES = [
  { id: 'paper-1', text: 'Checkpointing every few items bounds the work lost to a crash.' },
  { id: 'paper-2', text: 'Agents that report partial findings at a timeout are preferred by users.' },
  { id: 'repo-1', text: 'Durable steps are memoized: a resumed run does not call the model twice.' },
  { id: 'forum-1', text: 'Unbounded checkpoint tables are a common operational complaint.' },
  { id: 'forum-2', text: 'Time budgets make an agent degrade gracefully instead of failing.' },
];

/** The scripted model: a deterministic "summary" of one source. */
function scriptedModel(text: string): string {
  const words = text.replace(/[.,:]/g, '').split(' ');
  return words.slice(0, 6).join(' ').toLowerCase();
}

const Research = Annotation.Root({
  topic: Annotation<string>({ reducer: (_a, b) => b, default: () => '' }),
  next: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  findings: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  approved: Annotation<string>({ reducer: (_a, b) => b, default: () => '' }),
  report: Annotation<string>({ reducer: (_a, b) => b, default: () => '' }),
});
type State = typeof Research.State;

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: './langgraph.db' },
    thread: { type: 'string', default: 'research-1' },
    'crash-after': { type: 'string' },
    approve: { type: 'string' },
  },
});
const crashAfter = args['crash-after'] === undefined ? undefined : Number(args['crash-after']);

const saver = new BatonSaver({ store: args.db, ttl: '7d', keepLatest: 20 });
const graph = new StateGraph(Research)
  .addNode('read', (s: State) => {
    // The checkpoint after the previous source is already committed ("sync" durability below).
    if (s.next === crashAfter) {
      console.error(`simulating a crash: SIGKILL after ${s.next} sources`);
      process.kill(process.pid, 'SIGKILL');
    }
    const source = SOURCES[s.next];
    if (!source) return {};
    console.log(`read ${source.id}: ${scriptedModel(source.text)}`);
    return { next: s.next + 1, findings: [`${source.id}: ${scriptedModel(source.text)}`] };
  })
  .addNode('approve', (s: State) => ({
    approved: String(interrupt(`Publish a report of ${s.findings.length} findings?`)),
  }))
  .addNode('write', (s: State) => ({
    report: s.approved === 'yes' ? `Report on ${s.topic}:\n- ${s.findings.join('\n- ')}` : 'Not published.',
  }))
  .addEdge(START, 'read')
  .addConditionalEdges('read', (s: State) => (s.next < SOURCES.length ? 'read' : 'approve'))
  .addEdge('approve', 'write')
  .addEdge('write', END)
  .compile({ checkpointer: saver });

const config = { configurable: { thread_id: args.thread } };
const before = await graph.getState(config);
let input: Parameters<typeof graph.invoke>[0];
if (args.approve !== undefined) input = new Command({ resume: args.approve });
else if (before.next.length > 0) {
  console.error(
    `Thread ${args.thread} stopped after ${before.values.next} of ${SOURCES.length} sources; resuming it.`,
  );
  input = null;
} else input = { topic: 'durable agents' };

// "sync" durability: each step's checkpoint is committed before the next step starts, so a crash
// loses at most the step that was running.
const result = await graph.invoke(input, { ...config, durability: 'sync' });
const pending = (result as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__;
if (pending?.length)
  console.log(`waiting for approval: ${String(pending[0]?.value)} (run again with --approve yes)`);
else console.log(result.report);
const thread = await saver.getThread(args.thread);
console.log(
  `thread ${args.thread}: ${thread?.checkpoints} checkpoints kept, expires ${new Date(thread?.expiresAt ?? 0).toISOString()}`,
);
await saver.close();
