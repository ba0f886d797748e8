#!/usr/bin/env node
// Runs the built CLI when there is one, else the TypeScript sources through tsx (a fresh clone).
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node >= 22.1 keeps V8's compiled code of the modules loaded after this on disk (in the OS temp
// dir; NODE_DISABLE_COMPILE_CACHE=1 turns it off): `baton ls --help` on Node 22 took 151 ms of wall
// time instead of 184-189 (10 pairs twice, ratio 1.26, load 0.7-0.9); a restarted `baton worker`
// pays the same module loading before it takes a dead peer's runs back (issue 18 item 4). Node 20 has no such cache: a no-op there. Only the
// CLI does this: the library leaves the host process's settings alone.
module.enableCompileCache?.();

const built = new URL('../dist/cli/main.js', import.meta.url);
process.env.BATON_CLI_MAIN = '1';
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
