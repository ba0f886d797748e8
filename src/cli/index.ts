/** The `baton` command line, and the live view other programs (the demo) reuse. */
export { main } from './main.ts';
export { ExitCode } from './output.ts';
export { followRun } from './run-commands.ts';
