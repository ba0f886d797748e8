/**
 * `node --import ./bench/_register.mjs bench/run.ts`: runs the benchmark's TypeScript compiled the
 * way the published package is (see bench/_loader.mjs), instead of through tsx.
 */
import { register } from 'node:module';

register('./_loader.mjs', import.meta.url);
