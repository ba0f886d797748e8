/**
 * Every SQL statement the SQLite store executes, for tests that count what an operation costs: the
 * driver's `prepare` is wrapped for the calling test file (installed in `beforeAll`, restored in
 * `afterAll`), and each `run`/`get`/`all` logs its statement's text, whitespace collapsed.
 */
import { afterAll, beforeAll } from 'vitest';
import { sqliteDriver } from '../src/store/index.ts';

type Fn = (...args: unknown[]) => unknown;
type Prepare = (this: unknown, sql: string) => { run: Fn; get: Fn; all: Fn };

export interface StatementLog {
  /** The statements executed so far, in order; empty it (`length = 0`) to start counting afresh. */
  executed: string[];
  /** How many executed statements match. */
  count(pattern: RegExp): number;
}

export function logStatements(): StatementLog {
  const executed: string[] = [];
  const proto = sqliteDriver().Database.prototype as unknown as { prepare: Prepare };
  const original = proto.prepare;
  beforeAll(() => {
    proto.prepare = function (this: unknown, sql: string) {
      const statement = original.call(this, sql);
      const text = sql.replace(/\s+/g, ' ').trim();
      for (const method of ['run', 'get', 'all'] as const) {
        const call = statement[method].bind(statement);
        statement[method] = (...args: unknown[]) => {
          executed.push(text);
          return call(...args);
        };
      }
      return statement;
    };
  });
  afterAll(() => {
    proto.prepare = original;
  });
  return { executed, count: (pattern) => executed.filter((sql) => pattern.test(sql)).length };
}
