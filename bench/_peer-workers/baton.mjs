// A Baton worker process for the killed-worker recovery figure (bench/_peer-recovery.ts).
// argv: <module url of the built baton> <sqlite file> <hold|take>. "hold" starts one run whose body
// never ends; "take" only registers the task, so the run it reports is one taken back from a dead owner.
// Prints `got <run id>` when a body starts. Plain JS on the built package: what a user's worker loads.
const [moduleUrl, file, mode] = process.argv.slice(2);
const { createBaton, defineTask } = await import(moduleUrl);
// The store has its own door (`baton/store`); the root export no longer carries it.
const { openSqliteStore } = await import(new URL('./store/index.js', moduleUrl).href);
const store = openSqliteStore(file);
const hang = defineTask({
  name: 'bench.hang',
  retry: false,
  run: (_input, ctx) => {
    process.stdout.write(`got ${ctx.runId}\n`);
    return new Promise(() => {});
  },
});
const baton = createBaton({ store, tasks: [hang], worker: { concurrency: 1 } });
await baton.ready();
if (mode === 'hold') await baton.start(hang, {});
