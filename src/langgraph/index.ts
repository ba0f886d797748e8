/**
 * `baton/langgraph`: a LangGraph.js checkpointer on Baton's store, with retention (TTL, keep-latest
 * pruning, delete and copy a thread). Needs the optional peers `@langchain/langgraph-checkpoint`
 * and `@langchain/core`; `import 'baton'` never loads this module.
 */
export { BatonSaver, type BatonSaverOptions } from './baton-saver.ts';
export type { RetentionOptions } from './saver-options.ts';
