/**
 * The Postgres store as the rest of Baton sees it without loading it: `import 'baton'` must not pull
 * in node-postgres (nor this folder's store code) for a user who never names a `postgres://` URL.
 * Only type imports and the dependency-free url.ts are static here; the store itself is imported
 * when a URL is opened. The `baton/postgres` subpath (index.ts) exports the store statically.
 */
import { BatonError } from '../../core/index.ts';
import type { Store } from '../store.ts';
import type { PostgresStore, PostgresStoreOptions } from './postgres-store.ts';
import { parsePostgresUrl, redactError } from './url.ts';

export { isPostgresUrl } from './url.ts';

/** Marks a real PostgresStore (see isPostgresStore), so nothing needs its class to recognise one. */
/** Runs one claim of a worker takes on Postgres (PostgresStore.claimBatch; here for the deferred store too). */
export const POSTGRES_CLAIM_BATCH = 1_000;

export const POSTGRES_STORE = Symbol.for('baton.PostgresStore');

/** True for an opened `PostgresStore`, recognised without loading its module. */
export function isPostgresStore(store: Store): store is PostgresStore {
  return POSTGRES_STORE in store;
}

/** What db_query references need of a Postgres store, loaded or still loading. */
export interface PostgresReads {
  readonly dialect: 'postgres';
  /** The schema holding Baton's tables. */
  readonly schema: string;
  /** One SELECT in a read-only transaction, BIGINT read as numbers. */
  queryReadOnly(text: string, values: unknown[]): Promise<Record<string, unknown>[]>;
}

/** True for a Postgres store (opened or deferred) that db_query references can read. */
export function hasPostgresReads(store: Store): store is Store & PostgresReads {
  return (
    store.dialect === 'postgres' && 'queryReadOnly' in store && typeof store.queryReadOnly === 'function'
  );
}

/** Loads the store module on first use; a missing driver is a clear STORE_INVALID, not a stack. */
async function loadStoreModule(location: string): Promise<typeof import('./postgres-store.ts')> {
  try {
    return await import('./postgres-store.ts');
  } catch (err) {
    throw new BatonError(
      'STORE_INVALID',
      `cannot open the Postgres store at ${location}: the store could not be loaded (is the pg package installed?)`,
      { cause: err, data: { location } },
    );
  }
}

/** Opens (and migrates) the Postgres store at a URL, loading its module first. */
export async function openPostgresAt(options: PostgresStoreOptions & { connectionString: string }) {
  const url = parsePostgresUrl(options.connectionString);
  const { openPostgresStore } = await loadStoreModule(url.redacted);
  return openPostgresStore(options);
}

/**
 * A Postgres store handed out synchronously (`createBaton({ store: 'postgres://…' })`) while its
 * module loads: the URL is checked now (a malformed one throws here, as the store would), every
 * operation waits for the store and then runs on it in call order, and subscriptions attach when
 * it arrives. Connection problems surface from the first operation, as with the store itself.
 */
export class DeferredPostgresStore implements Store, PostgresReads {
  readonly dialect = 'postgres' as const;
  readonly location: string;
  readonly schema: string;
  private readonly loading: Promise<PostgresStore>;
  private real: PostgresStore | undefined;

  constructor(options: PostgresStoreOptions & { connectionString: string }) {
    const url = parsePostgresUrl(options.connectionString);
    this.location = url.redacted;
    this.schema = options.schema ?? url.schema ?? 'baton';
    if (this.schema.length === 0 || this.schema.length > 63)
      throw new BatonError('INVALID_OPTION', `schema must be 1 to 63 characters, got "${this.schema}"`);
    this.loading = loadStoreModule(this.location).then(
      (m) => {
        this.real = new m.PostgresStore(options);
        return this.real;
      },
      (err: unknown) => {
        throw redactError(err, url.password);
      },
    );
    // Reported by every operation; this only keeps it from counting as unhandled.
    this.loading.catch(() => {});
  }

  /** Runs `fn` on the store: at once when loaded, else after loading (reactions keep call order). */
  private call<T>(fn: (s: PostgresStore) => Promise<T>): Promise<T> {
    return this.real ? fn(this.real) : this.loading.then(fn);
  }

  private attach(subscribe: (s: PostgresStore) => () => void): () => void {
    if (this.real) return subscribe(this.real);
    let detach: (() => void) | undefined;
    let gone = false;
    this.loading.then(
      (s) => {
        if (!gone) detach = subscribe(s);
      },
      () => {},
    );
    return () => {
      gone = true;
      detach?.();
    };
  }

  get hinting(): boolean {
    return this.real?.hinting ?? false;
  }

  readonly claimBatch = POSTGRES_CLAIM_BATCH;

  queryReadOnly(text: string, values: unknown[]) {
    return this.call((s) => s.queryReadOnly(text, values));
  }
  createRuns(...a: Parameters<Store['createRuns']>) {
    return this.call((s) => s.createRuns(...a));
  }
  getRun(...a: Parameters<Store['getRun']>) {
    return this.call((s) => s.getRun(...a));
  }
  listRuns(...a: Parameters<Store['listRuns']>) {
    return this.call((s) => s.listRuns(...a));
  }
  transition(...a: Parameters<Store['transition']>) {
    return this.call((s) => s.transition(...a));
  }
  transitionAll(...a: Parameters<Store['transitionAll']>) {
    return this.call((s) => s.transitionAll(...a));
  }
  countRuns() {
    return this.call((s) => s.countRuns());
  }
  claimRuns(...a: Parameters<Store['claimRuns']>) {
    return this.call((s) => s.claimRuns(...a));
  }
  heartbeat(...a: Parameters<Store['heartbeat']>) {
    return this.call((s) => s.heartbeat(...a));
  }
  recoverExpiredLeases() {
    return this.call((s) => s.recoverExpiredLeases());
  }
  releaseOwners(...a: Parameters<Store['releaseOwners']>) {
    return this.call((s) => s.releaseOwners(...a));
  }
  registerWorker(...a: Parameters<Store['registerWorker']>) {
    return this.call((s) => s.registerWorker(...a));
  }
  listWorkers(...a: Parameters<Store['listWorkers']>) {
    return this.call((s) => s.listWorkers(...a));
  }
  removeWorkers(...a: Parameters<Store['removeWorkers']>) {
    return this.call((s) => s.removeWorkers(...a));
  }
  recordStep(...a: Parameters<Store['recordStep']>) {
    return this.call((s) => s.recordStep(...a));
  }
  getSteps(...a: Parameters<Store['getSteps']>) {
    return this.call((s) => s.getSteps(...a));
  }
  saveCheckpoint(...a: Parameters<Store['saveCheckpoint']>) {
    return this.call((s) => s.saveCheckpoint(...a));
  }
  getLastCheckpoint(...a: Parameters<Store['getLastCheckpoint']>) {
    return this.call((s) => s.getLastCheckpoint(...a));
  }
  listCheckpoints(...a: Parameters<Store['listCheckpoints']>) {
    return this.call((s) => s.listCheckpoints(...a));
  }
  addPartial(...a: Parameters<Store['addPartial']>) {
    return this.call((s) => s.addPartial(...a));
  }
  listPartials(...a: Parameters<Store['listPartials']>) {
    return this.call((s) => s.listPartials(...a));
  }
  appendEvents(...a: Parameters<Store['appendEvents']>) {
    return this.call((s) => s.appendEvents(...a));
  }
  readEvents(...a: Parameters<Store['readEvents']>) {
    return this.call((s) => s.readEvents(...a));
  }
  lastEventId() {
    return this.call((s) => s.lastEventId());
  }
  onEvents(...a: Parameters<Store['onEvents']>) {
    return this.attach((s) => s.onEvents(...a));
  }
  health() {
    return this.call((s) => s.health());
  }
  onWake(...a: Parameters<PostgresStore['onWake']>) {
    return this.attach((s) => s.onWake(...a));
  }
  addTimer(...a: Parameters<Store['addTimer']>) {
    return this.call((s) => s.addTimer(...a));
  }
  takeDueTimers(...a: Parameters<Store['takeDueTimers']>) {
    return this.call((s) => s.takeDueTimers(...a));
  }
  cancelTimers(...a: Parameters<Store['cancelTimers']>) {
    return this.call((s) => s.cancelTimers(...a));
  }
  nextWakeAt(...a: Parameters<Store['nextWakeAt']>) {
    return this.call((s) => s.nextWakeAt(...a));
  }
  addSignal(...a: Parameters<Store['addSignal']>) {
    return this.call((s) => s.addSignal(...a));
  }
  readSignal(...a: Parameters<Store['readSignal']>) {
    return this.call((s) => s.readSignal(...a));
  }
  listSignals(...a: Parameters<Store['listSignals']>) {
    return this.call((s) => s.listSignals(...a));
  }
  takeDueDeliveries(...a: Parameters<Store['takeDueDeliveries']>) {
    return this.call((s) => s.takeDueDeliveries(...a));
  }
  settleDelivery(...a: Parameters<Store['settleDelivery']>) {
    return this.call((s) => s.settleDelivery(...a));
  }
  listDeliveries(...a: Parameters<Store['listDeliveries']>) {
    return this.call((s) => s.listDeliveries(...a));
  }
  sweep() {
    return this.call((s) => s.sweep());
  }
  /** Closes the store once loaded; a store that never loaded has nothing open. */
  async close(): Promise<void> {
    const store = await this.loading.catch(() => undefined);
    await store?.close();
  }
}
