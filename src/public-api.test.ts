/**
 * The public surface, pinned: the names `import 'baton'` gives and the subpaths package.json
 * exports. Adding a name or a subpath is meant to be a deliberate change to this list, not a side
 * effect of an `export *` somewhere below.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as baton from './index.ts';

const ROOT = resolve(import.meta.dirname, '..');

const ROOT_NAMES = [
  'Baton',
  'BatonError',
  'ErrorCodes',
  'MAX_DURATION_MS',
  'MAX_INPUT_BYTES',
  'ManualClock',
  'NonRetriableError',
  'RetryAfterError',
  'RunStatuses',
  'SCHEDULE_JSON_SCHEMA',
  'TerminalStatuses',
  'ValidationError',
  'Worker',
  'agentTool',
  'createBaton',
  'defineAgentTask',
  'defineConfig',
  'defineDegradationTable',
  'defineEscalationPolicy',
  'defineFlow',
  'defineTask',
  'defineTool',
  'formatDuration',
  'httpToolHandler',
  'isBatonError',
  'isEventType',
  'isFlowDefinition',
  'isTaskDefinition',
  'isTerminal',
  'loadPlan',
  'loadToolsDir',
  'parseDuration',
  'readPlanFile',
  'systemClock',
  'verifySignature',
];

const SUBPATHS = {
  '.': 'index',
  './agent': 'agent/index',
  './ai': 'ai-sdk/index',
  './budget': 'core/budget/index',
  './client': 'client/index',
  './context': 'context/index',
  './http': 'http/index',
  './langgraph': 'langgraph/index',
  './mcp': 'mcp/index',
  './otel': 'otel/index',
  './postgres': 'store/postgres/index',
  './refs': 'refs/index',
  './retry': 'core/retry/index',
  './schedule': 'schedule/index',
  './serverless': 'serverless/index',
  './store': 'store/index',
  './testing': 'testing/index',
  './tools': 'tools/index',
  './webhooks': 'delivery/index',
};

interface PackageJson {
  exports: Record<string, string | { types: string; default: string }>;
}

describe('the root export', () => {
  it('is the pinned list of names a user writes code with', () => {
    expect(Object.keys(baton).sort()).toEqual([...ROOT_NAMES].sort());
  });

  it('leaves internals out', () => {
    for (const name of ['loopLane', 'sliceBudget', 'roundTo2', 'newId', 'openSqliteStore', 'runAgentLoop'])
      expect(Object.keys(baton), name).not.toContain(name);
  });
});

describe('package.json exports', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
  const entries = Object.entries(pkg.exports).filter(([key]) => key !== './package.json');

  it('are the pinned subpaths, each built from a folder door (index.ts)', () => {
    const mapped = Object.fromEntries(
      entries.map(([key, value]) => {
        if (typeof value === 'string') throw new Error(`${key} has no types condition`);
        expect(value.types, key).toBe(value.default.replace(/\.js$/, '.d.ts'));
        return [key, value.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '')];
      }),
    );
    expect(mapped).toEqual(SUBPATHS);
    for (const source of Object.values(SUBPATHS))
      expect(existsSync(join(ROOT, 'src', `${source}.ts`)), source).toBe(true);
  });

  it('say in their door what they are (a leading doc comment)', () => {
    for (const source of Object.values(SUBPATHS)) {
      const text = readFileSync(join(ROOT, 'src', `${source}.ts`), 'utf8');
      expect(text.trimStart().startsWith('/**'), source).toBe(true);
    }
  });
});
