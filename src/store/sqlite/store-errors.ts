/** How the SQLite store reports SQLite's errors: by what they mean for the caller, naming the file. */
import { BatonError, isBatonError } from '../../core/index.ts';
import { isDamaged, storeError } from './open-database.ts';

interface Located {
  readonly location: string;
}

/**
 * Damage found after the file opened (a page that no longer parses, an index that disagrees with its
 * table) surfaces as STORE_CORRUPT naming the file, from whichever method met it, never as a raw
 * SQLite error that callers would report as an internal one.
 */
export function translateStoreErrors(cls: { prototype: Located }): void {
  for (const name of Object.getOwnPropertyNames(cls.prototype)) {
    const desc = Object.getOwnPropertyDescriptor(cls.prototype, name);
    if (name === 'constructor' || typeof desc?.value !== 'function') continue;
    const method = desc.value as (this: Located, ...args: unknown[]) => unknown;
    const translate = (store: Located, err: unknown) =>
      isDamaged(err) || (err as { code?: unknown } | null)?.code === 'SQLITE_READONLY'
        ? storeError(store.location, err)
        : isUnwritable(err)
          ? new BatonError(
              'STORE_UNAVAILABLE',
              `${store.location} cannot take writes now: ${(err as Error).message} (${(err as { code: string }).code}); nothing of the failed write was kept`,
              { cause: err, data: { path: store.location, sqliteCode: (err as { code: string }).code } },
            )
          : isBatonError(err, 'STORE_CORRUPT') && err.data.path === undefined
            ? new BatonError('STORE_CORRUPT', `${store.location} is corrupted: ${err.message}`, {
                cause: err,
                data: { path: store.location },
              })
            : err;
    Object.defineProperty(cls.prototype, name, {
      ...desc,
      value: function (this: Located, ...args: unknown[]) {
        try {
          const out = method.apply(this, args);
          return out instanceof Promise
            ? out.catch((err: unknown) => {
                throw translate(this, err);
              })
            : out;
        } catch (err) {
          throw translate(this, err);
        }
      },
    });
  }
}

/**
 * A full disk (or a file at its size limit), I/O failures, and another process's write lock held
 * past the busy timeout (SQLITE_BUSY): the write can succeed later.
 */
function isUnwritable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    (code === 'SQLITE_FULL' ||
      code === 'SQLITE_NOMEM' ||
      code === 'SQLITE_BUSY' ||
      code.startsWith('SQLITE_IOERR'))
  );
}
