// A DBOS process for the killed-worker recovery figure (bench/_peer-recovery.ts).
// argv: <postgres url> <schema> <hold|take> <workflow id>. "hold" starts the workflow, whose body
// never ends; "take" only launches: DBOS recovers this executor's pending workflows at launch.
// Prints `got <workflow id>` when a body starts.
import { DBOS } from '@dbos-inc/dbos-sdk';

const [url, schema, mode, id] = process.argv.slice(2);
DBOS.setConfig({
  name: 'baton-bench',
  systemDatabaseUrl: url,
  systemDatabaseSchemaName: schema,
  logLevel: 'error',
});
const hang = DBOS.registerWorkflow(
  async () => {
    process.stdout.write(`got ${DBOS.workflowID}\n`);
    await new Promise(() => {});
  },
  { name: 'bench_hang' },
);
await DBOS.launch();
if (mode === 'hold') await DBOS.startWorkflow(hang, { workflowID: id })();
