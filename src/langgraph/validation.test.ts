/**
 * LangGraph's official checkpointer validation suite, run against BatonSaver on real SQLite files
 * (a fresh file per checkpointer, as the suite requires isolated instances).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BatonSaver } from './index.ts';

// The suite is written for Jest-style globals; this project does not turn vitest's globals on.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
const { validate } = await import('@langchain/langgraph-checkpoint-validation');

const dir = mkdtempSync(join(tmpdir(), 'baton-lg-validate-'));
let n = 0;

validate({
  checkpointerName: 'baton/langgraph (SQLite)',
  createCheckpointer: () => new BatonSaver({ store: join(dir, `cp-${n++}.db`) }),
  destroyCheckpointer: (saver: BatonSaver) => saver.close(),
  afterAll: () => rmSync(dir, { recursive: true, force: true }),
});
