/**
 * Dependencies loaded on first use (issue 15 item 4). Its own folder, not `core`, though `core`
 * builds its schemas through it: this file imports no Node built-in statically (Node's module
 * loader is reached through `process.getBuiltinModule` when a dependency is first used), so the
 * portable client and the dashboard's browser bundle, which import `core`, stay loadable anywhere.
 */

export { onFirstUse } from './require.ts';
export { esmOnFirstUse, lazySchema, schemasOnFirstUse, type Zod, zod } from './zod.ts';
