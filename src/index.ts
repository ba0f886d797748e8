/**
 * Baton: a durable, time-aware runtime for multi-agent and LLM tool pipelines.
 *
 * @example
 *   const baton = createBaton({ store: './baton.db' });
 *   const run = await baton.start(defineTask({ name: 'hello', run: async () => 'hi' }));
 *   console.log(await run.result());
 */

export * from './agent/index.ts';
export * from './config/index.ts';
export * from './context/index.ts';
export * from './core/index.ts';
export {
  DEFAULT_SIGNATURE_TOLERANCE_MS,
  parseWebhookTarget,
  signBody,
  verifySignature,
  type WebhookTarget,
} from './delivery/index.ts';
export * from './refs/index.ts';
export * from './runtime/index.ts';
export * from './schedule/index.ts';
export type * from './store/index.ts';
export {
  DEFAULT_TTL_MS,
  listMigrations,
  openSqliteStore,
  SqliteStore,
  type SqliteStoreOptions,
} from './store/index.ts';
export * from './time/index.ts';
export * from './tools/index.ts';
