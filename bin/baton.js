#!/usr/bin/env node
// Runs the built CLI when there is one, else the TypeScript sources through tsx (a fresh clone).
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli/main.js', import.meta.url);
process.env.BATON_CLI_MAIN = '1';
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
