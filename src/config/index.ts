/**
 * Configuration files (`baton.config.ts`): the typed shape and `defineConfig`, and the check that
 * turns one into `createBaton` options with every unknown key refused by name.
 */
export { type AnyDefinition, type BatonConfig, defineConfig } from './define-config.ts';
export { parseConfig, type ResolvedConfig } from './parse-config.ts';
