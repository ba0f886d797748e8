/**
 * The default logger: pino at level 'silent', loaded only once something needs more than silence.
 * Loading and building pino cost a restarted worker ~15-25 ms of CPU before its first run (issue 18
 * item 4), while a silent pino's level methods do nothing at all. So until something touches what
 * only a real pino has, this answers as a silent pino does: the level methods are no-ops, `level` is
 * 'silent', `isLevelEnabled` is false, and `child(bindings)` gives another logger of this kind.
 * Anything else (setting `level`, `bindings()`, `flush`, a child with options) builds the real pino
 * and goes to it from then on; a child not yet built is then made from its parent's real logger, so
 * it follows its parent's level as pino's children do.
 */
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const LEVEL_METHODS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);
const noop = (): void => {};

interface Node {
  real?: Logger;
  /** The root's way to build pino (at level 'silent'). */
  make?: () => Logger;
  parent?: Node;
  bindings?: Bindings;
}

function built(n: Node): boolean {
  return n.real !== undefined || (n.parent !== undefined && built(n.parent));
}

function realOf(n: Node): Logger {
  if (n.real) return n.real;
  n.real = n.parent ? realOf(n.parent).child(n.bindings ?? {}) : (n.make as () => Logger)();
  return n.real;
}

function loggerOf(n: Node): Logger {
  return new Proxy(Object.create(null) as object, {
    get(_target, prop) {
      if (!built(n)) {
        if (typeof prop === 'string' && LEVEL_METHODS.has(prop)) return noop;
        if (prop === 'level') return 'silent';
        if (prop === 'isLevelEnabled') return () => false;
        if (prop === 'child')
          return (bindings: Bindings, options?: ChildLoggerOptions) =>
            options === undefined ? loggerOf({ parent: n, bindings }) : realOf(n).child(bindings, options);
      }
      const real = realOf(n);
      const value: unknown = Reflect.get(real, prop, real);
      return typeof value === 'function' ? value.bind(real) : value;
    },
    set(_target, prop, value) {
      return Reflect.set(realOf(n), prop, value);
    },
    has(_target, prop) {
      return Reflect.has(realOf(n), prop);
    },
  }) as Logger;
}

/** A logger that behaves as `make()` (a pino at level 'silent') and builds it only when needed. */
export function lazySilentLogger(make: () => Logger): Logger {
  return loggerOf({ make });
}
