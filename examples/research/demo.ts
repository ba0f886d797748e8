/**
 * `npm start`: runs the research demo on ./baton.db and prints what happened.
 *
 *   npm start                         run the demo (or finish an unfinished one)
 *   npm start -- --crash-after 50%    SIGKILL this process when half the items are read
 *   npm start -- --fresh              start a new run even if an unfinished one exists
 *   npm start -- --db other.db        use another database file
 *
 * After a crash, the next `npm start` (or `baton resume <id>`) takes the run back at once — its
 * owner process is gone — and finishes it from the checkpoints, without redoing memoized steps.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { followRun } from '../../src/cli/index.ts';
import { type BatonEvent, createBaton, isTerminal } from '../../src/index.ts';
import { openSqliteStore } from '../../src/store/index.ts';
import { type DemoInput, researchFlow } from './flow.ts';
import { buildKnowledgeBase, KNOWLEDGE_TABLES } from './knowledge-base.ts';

const TOTAL_ITEMS = 12 + 8 + 15;
const { values } = parseArgs({
  options: {
    'crash-after': { type: 'string' },
    fresh: { type: 'boolean', default: false },
    db: { type: 'string', default: './baton.db' },
    json: { type: 'boolean', default: false },
  },
});

function percent(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,3})%?$/.exec(value.trim());
  const n = m ? Number(m[1]) : Number.NaN;
  if (!(n > 0 && n < 100)) {
    process.stderr.write(`--crash-after must be a percentage between 1% and 99%, got "${value}"\n`);
    process.exit(2);
  }
  return n;
}

const crashAt = percent(values['crash-after']);
const store = openSqliteStore(values.db as string);
buildKnowledgeBase(store.database);
const baton = createBaton({
  store,
  tasks: [...researchFlow.tasks],
  refs: { tables: KNOWLEDGE_TABLES },
  // The corpus is small, so the size thresholds of the transfer table are scaled down with it:
  // under 200 tokens whole, up to 4,000 summarized, beyond that by reference.
  context: { tables: { sizeThresholds: { fullBelow: 200, summaryBelow: 4_000, batchedAbove: 20_000 } } },
  // A callback channel: what a chat bot would send to its user, at the time the user asked for.
  schedule: {
    onDelivery: (d) => {
      const p = d.payload as {
        aiName: string;
        message?: string;
        late?: boolean;
        scheduled: { text: string; at: string };
      };
      const now = new Date().toISOString().slice(11, 19);
      if (d.kind === 'tool_choice')
        say(`📨 ${now} ${p.aiName}: "${p.message}" (asked for "${p.scheduled.text}")`);
      else
        say(
          `📬 ${now} ${p.aiName} result delivered (asked for "${p.scheduled.text}" = ${p.scheduled.at.slice(11, 19)})${p.late ? ', late' : ''}`,
        );
    },
  },
});
const say = (line: string) => process.stderr.write(`${line}\n`);

const unfinished = values.fresh
  ? undefined
  : (await baton.listRuns({ name: researchFlow.name, limit: 20 })).find((r) => !isTerminal(r.status));

let id: string;
const notes: string[] = [];
if (unfinished) {
  say(
    `Found unfinished demo run ${unfinished.id} (its process was killed). Resuming it from its checkpoints…`,
  );
  id = (await baton.resume(unfinished.id, 'demo')).id;
} else {
  const input: DemoInput = { topic: 'time-aware agent runtimes' };
  const run = await baton.start(researchFlow, input, {
    source: fileURLToPath(new URL('./flow.ts', import.meta.url)),
  });
  id = run.id;
  say(`Started demo run ${id} on ${values.db}: 3 researchers in parallel, then an aggregator.`);
}

if (crashAt !== undefined) {
  let done = 0;
  store.onEvents((events: readonly BatonEvent[]) => {
    done += events.filter((e) => e.type === 'step:completed').length;
    if ((done / TOTAL_ITEMS) * 100 >= crashAt) {
      say(
        `\n💥 simulating a crash: SIGKILL at ${Math.round((done / TOTAL_ITEMS) * 100)}% of the items read.`,
      );
      say(
        `   Run \`npm start\` again (or \`npm run baton -- resume ${id}\`) to finish from the checkpoints.`,
      );
      process.kill(process.pid, 'SIGKILL');
    }
  });
}

const code = await followRun(baton, id, {
  json: values.json as boolean,
  notes,
  showOutput: false,
  quietPast: unfinished !== undefined,
});
const outcome = await baton.result(id);
if (!values.json && outcome.output) printReport(outcome.output as Report);
const events = await store.readEvents({ rootId: id, limit: 10_000 });
const replayed = events
  .filter((e) => e.type === 'step:replayed')
  .reduce((n, e) => n + (e.data as { count: number }).count, 0);
const resumedFrom = events.filter(
  (e) => e.type === 'attempt:started' && (e.data as { resumedFrom?: number }).resumedFrom,
);
if (!values.json && unfinished !== undefined) {
  say('\nFinished from where the killed process stopped:');
  for (const e of resumedFrom)
    say(
      `  ${e.runId.slice(id.length + 1)} resumed from checkpoint ${(e.data as { resumedFrom: number }).resumedFrom}`,
    );
  say(`  ${replayed} memoized step(s) were taken from the record and not run again`);
}
await baton.close();
await store.close();
process.exitCode = code;

interface Report {
  sources: Record<string, number>;
  transfers: Record<string, string>;
  knownAtoms: string[];
  timeoutsInHistory: number;
  incompleteSources: string[];
  topClaims: Array<{ score: number; text: string; from: string }>;
  gaps: string[];
  themes: Array<{ keyword: string; sources: string[] }>;
  answeredPains: Array<{ pain: string; evidence: string }>;
}

function printReport(r: Report): void {
  const out = process.stdout;
  out.write(
    `\nReport: ${Object.entries(r.sources)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')} read\n`,
  );
  if (r.incompleteSources.length > 0)
    out.write(`  (incomplete sources: ${r.incompleteSources.join(', ')})\n`);
  out.write('  strongest claims:\n');
  for (const c of r.topClaims) out.write(`    ${c.score.toFixed(2)}  ${c.text}  [${c.from}]\n`);
  out.write(
    `  how the findings reached the aggregator (its context budget): ${Object.entries(r.transfers)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}\n`,
  );
  out.write(
    `  from the knowledge base (db_query): ${r.knownAtoms.length} top claims; timeouts in the run history: ${r.timeoutsInHistory}\n`,
  );
  out.write(
    `  themes across sources: ${r.themes.map((t) => `${t.keyword} (${t.sources.length})`).join(', ')}\n`,
  );
  out.write(
    `  gaps seen in tools: ${r.gaps.length}; pain points answered by evidence: ${r.answeredPains.length}\n`,
  );
  for (const p of r.answeredPains.slice(0, 3)) out.write(`    "${p.pain}"\n      ← ${p.evidence}\n`);
}
