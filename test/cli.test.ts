/**
 * The CLI as a user types it, in real processes: a JSON plan runs to the end, and every kind of
 * bad input gets a clear error, exit code 2, and leaves the database exactly as it was.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const { Database } = sqliteDriver();

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-cli-'));
const db = join(dir, 'baton.db');
const tasks = join(import.meta.dirname, 'fixtures', 'tasks.ts');

function baton(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...args], {
    cwd: dir,
    env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function plan(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

/** The database's content (checkpoint the WAL first so the file holds everything). */
function fingerprint(): string {
  const d = new Database(db);
  d.pragma('wal_checkpoint(TRUNCATE)');
  const rows = ['runs', 'steps', 'checkpoints', 'events'].map((t) =>
    JSON.stringify(d.prepare(`SELECT * FROM ${t}`).all()),
  );
  d.close();
  return createHash('sha256').update(rows.join('\n')).digest('hex');
}

let firstRun = '';
beforeAll(() => {
  const ok = plan('ok.json', {
    plan: {
      steps: [
        { aiName: 'double', draftArgs: { n: 2 } },
        { aiName: 'double', draftArgs: { n: 10 }, dependsOn: [0] },
      ],
    },
  });
  const r = baton('--db', db, 'run', ok, '--tasks', tasks, '--json');
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const result = JSON.parse(r.out) as { id: string; status: string; output: Record<string, number> };
  expect(result).toMatchObject({ status: 'succeeded', output: { '0': 4, '1': 24 } });
  firstRun = result.id;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('baton CLI', () => {
  it('lists, shows and re-resumes a finished run', () => {
    const ls = baton('--db', db, 'ls', '--status', 'succeeded');
    expect(ls.code).toBe(0);
    expect(ls.out).toContain(firstRun);
    const show = baton('--db', db, 'show', firstRun);
    expect(show.code).toBe(0);
    expect(show.out).toMatch(/timeline[\s\S]*run:succeeded/);
    const resume = baton('--db', db, 'resume', firstRun, '--json');
    expect(resume.code).toBe(0);
    expect(JSON.parse(resume.out)).toMatchObject({
      status: 'succeeded',
      notes: [expect.stringMatching(/already succeeded/)],
    });
  });

  const bad: Array<[string, () => string[], RegExp]> = [
    [
      'an unknown task name',
      () => ['run', plan('unknown.json', { steps: [{ aiName: 'triple', draftArgs: {} }] }), '--tasks', tasks],
      /unknown task "triple"/,
    ],
    [
      'an input failing its schema (naming the field)',
      () => [
        'run',
        plan('badinput.json', { steps: [{ aiName: 'double', draftArgs: { n: 'two' } }] }),
        '--tasks',
        tasks,
      ],
      /input\.n: .*expected number/,
    ],
    [
      'a plan with a cycle (naming it)',
      () => [
        'run',
        plan('cycle.json', {
          steps: [
            { id: 'a', task: 'double', input: { n: 1 }, dependsOn: ['b'] },
            { id: 'b', task: 'double', input: { n: 1 }, dependsOn: ['a'] },
          ],
        }),
        '--tasks',
        tasks,
      ],
      /cycle: a → b → a/,
    ],
    [
      'a dependsOn pointing nowhere',
      () => [
        'run',
        plan('dangling.json', {
          plan: { steps: [{ aiName: 'double', draftArgs: { n: 1 }, dependsOn: [5] }] },
        }),
        '--tasks',
        tasks,
      ],
      /dependsOn\[0\] points to 5/,
    ],
    [
      'a plan file that is not JSON',
      () => ['run', plan('broken.json', '{"plan": {"steps": ['), '--tasks', tasks],
      /not valid JSON/,
    ],
    ['a resume of an unknown id', () => ['resume', 'run_DOES_NOT_EXIST'], /RUN_NOT_FOUND/],
    ['an unknown --status', () => ['ls', '--status', 'sleeping'], /--status must be one of/],
    [
      'an --input that is not JSON',
      () => [
        'run',
        plan('ok2.json', { steps: [{ aiName: 'double', draftArgs: { n: 1 } }] }),
        '--tasks',
        tasks,
        '--input',
        '{n:',
      ],
      /--input is not valid JSON/,
    ],
    ...(['1.5', '1e20', '99999999999999999999h'] as const).map((budget): [string, () => string[], RegExp] => [
      `a --budget of ${budget}`,
      () => [
        'run',
        plan('budget.json', { steps: [{ aiName: 'double', draftArgs: { n: 1 } }] }),
        '--tasks',
        tasks,
        '--budget',
        budget,
      ],
      /INVALID_OPTION: budget must be a whole number of milliseconds from 0 to/,
    ]),
    [
      'an 8,000-step plan whose dependencies run backwards into a cycle (no stack overflow)',
      () => [
        'run',
        plan('long-cycle.json', {
          plan: {
            steps: Array.from({ length: 8_000 }, (_, i) => ({
              aiName: 'double',
              draftArgs: { n: i },
              dependsOn: [i < 7_999 ? i + 1 : 0],
            })),
          },
        }),
        '--tasks',
        tasks,
      ],
      /cycle: 0 → 1 → .* → … 7980 more → 0/,
    ],
    [
      'an --input nested 5,000 deep',
      () => [
        'run',
        plan('ok3.json', { steps: [{ aiName: 'double', draftArgs: { n: 1 } }] }),
        '--tasks',
        tasks,
        '--input',
        `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
      ],
      /--input must be nested at most 512 levels deep/,
    ],
  ];
  it.each(bad)('refuses %s with exit code 2 and leaves the store untouched', (_name, args, message) => {
    const before = fingerprint();
    const r = baton('--db', db, ...args());
    expect(r.err).toMatch(message);
    expect(r.code).toBe(2);
    expect(fingerprint()).toBe(before);
  });

  it('leaves a question for a human durably waiting, answered later with baton decide', () => {
    const asking = plan('ask.json', {
      plan: {
        steps: [
          { id: 'look', aiName: 'stubborn' },
          { aiName: 'double', draftArgs: { n: 1 }, dependsOn: ['look'] },
        ],
      },
    });
    const r = baton('--db', db, 'run', asking, '--tasks', tasks, '--json');
    expect(r.code).toBe(4);
    const waiting = JSON.parse(r.out) as {
      id: string;
      decisions: Array<{ runId: string; request: { message: string } }>;
    };
    const step = waiting.decisions[0]?.runId as string;
    expect(waiting.decisions[0]?.request.message).toMatch(
      /^Research agent failed after 1 attempt\.\nTotal time spent: /,
    );
    const question = baton('--db', db, 'decide', step);
    expect(question.code).toBe(0);
    expect(question.out).toMatch(/\[Continue with partial results\]/);
    const before = fingerprint();
    const deep = baton(
      '--db',
      db,
      'decide',
      step,
      'manual_input',
      '--input',
      `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
    );
    expect(deep.err).toMatch(/INVALID_INPUT: --input must be nested at most 512 levels deep/);
    expect(deep.code).toBe(2);
    expect(fingerprint()).toBe(before);
    const bad = baton('--db', db, 'decide', step, 'maybe');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/DECISION_INVALID: answer\.choice must be one of/);
    const ok = baton('--db', db, 'decide', step, 'continue_partial');
    expect(ok.code).toBe(0);
    const again = baton('--db', db, 'decide', step, 'skip');
    expect(again.code).toBe(3);
    const done = baton('--db', db, 'resume', waiting.id, '--tasks', tasks, '--json');
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({
      status: 'partial',
      output: { look: { status: 'timeout', partial: true }, '1': 2 },
    });
    const show = baton('--db', db, 'show', waiting.id);
    // The agent counts; the step that waited for it (an aggregator) does not (protocol 001).
    expect(show.out).toMatch(/timeouts {2}1 spawned, 0 completed, 1 timed out → partial/);
    expect(show.out).toMatch(/decided {3}look: continue_partial by cli/);
  });

  it('reports every problem of a plan at once, each with its step', () => {
    const r = baton(
      '--db',
      db,
      'run',
      plan('many.json', {
        steps: [
          { id: 'a', task: 'double', input: { n: 'x' } },
          { id: 'b', task: 'nope', dependsOn: ['zz'] },
        ],
      }),
      '--tasks',
      tasks,
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/3 problem\(s\)/);
    expect(r.err).toMatch(/\[step a\] input\.n/);
    expect(r.err).toMatch(/\[step b\] .*points to "zz"/);
    expect(r.err).toMatch(/\[step b\] step "b" uses unknown task "nope"/);
  });

  it('ls and show open the database read-only: not a byte of it changes', () => {
    fingerprint(); // checkpoints the WAL into the file first
    const bytes = () => createHash('sha256').update(readFileSync(db)).digest('hex');
    const before = bytes();
    expect(baton('--db', db, 'ls').code).toBe(0);
    expect(baton('--db', db, 'show', firstRun).code).toBe(0);
    expect(bytes()).toBe(before);
  });

  it('refuses an empty --db file instead of setting it up as a new database', () => {
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    for (const args of [
      ['ls'],
      ['run', plan('e.json', { steps: [{ aiName: 'double', draftArgs: { n: 1 } }] }), '--tasks', tasks],
    ]) {
      const r = baton('--db', empty, ...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/STORE_INVALID: .*empty\.db is an empty file \(0 bytes\), not a Baton database/);
    }
    expect(readFileSync(empty).length).toBe(0);
  });

  it('refuses a --db that is not a Baton database, or is corrupted, without changing it', () => {
    const foreign = join(dir, 'foreign.db');
    const d = new Database(foreign);
    d.exec(
      'CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)',
    );
    d.close();
    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, Buffer.from('not sqlite at all, just some bytes '.repeat(200)));
    for (const [path, code] of [
      [foreign, 'STORE_INVALID'],
      [corrupt, 'STORE_CORRUPT'],
    ] as const) {
      const before = readFileSync(path);
      const r = baton('--db', path, 'ls');
      expect(r.code).toBe(2);
      expect(r.err).toContain(code);
      expect(readFileSync(path).equals(before)).toBe(true);
    }
    expect(existsSync(join(dir, 'missing.db'))).toBe(false);
    expect(baton('--db', join(dir, 'missing.db'), 'show', 'x').code).toBe(2);
    expect(existsSync(join(dir, 'missing.db'))).toBe(false);
  });

  it('baton gc deletes every expired run tree with its events, keeps the rest, and exits', () => {
    const path = join(dir, 'gc.db');
    const first = baton(
      '--db',
      path,
      'run',
      plan('gc-plan.json', {
        plan: { steps: [{ aiName: 'double', draftArgs: { n: 1 } }] },
      }),
      '--tasks',
      tasks,
      '--json',
    );
    expect(first.code).toBe(0);
    // Copies of that finished flow, half of them expired: whole trees (flow, steps, events).
    const d = new Database(path);
    const [flow] = d.prepare('SELECT id FROM runs WHERE parent_id IS NULL').pluck().all() as string[];
    const copy = d.transaction((i: number) => {
      const map = (id: string) => `${id}-c${i}`;
      for (const r of d.prepare('SELECT * FROM runs WHERE root_id = ?').all(flow) as Array<
        Record<string, unknown>
      >) {
        const row = {
          ...r,
          id: map(String(r.id)),
          root_id: map(String(r.root_id)),
          parent_id: r.parent_id ? map(String(r.parent_id)) : null,
          expires_at: i % 2 === 0 ? 1 : 9_999_999_999_999,
        };
        const cols = Object.keys(row);
        d.prepare(`INSERT INTO runs (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(
          ...Object.values(row),
        );
      }
      d.prepare(
        `INSERT INTO events (run_id, root_id, type, data, at) SELECT run_id || '-c' || ?, root_id || '-c' || ?, type, data, at FROM events WHERE root_id = ?`,
      ).run(String(i), String(i), flow);
    });
    for (let i = 0; i < 400; i++) copy(i);
    const count = (sql: string) => d.prepare(sql).pluck().get() as number;
    const runsBefore = count('SELECT count(*) FROM runs');
    const perTree = count(`SELECT count(*) FROM runs WHERE root_id = '${flow}'`);
    expect(perTree).toBeGreaterThan(1);
    expect(runsBefore).toBe(401 * perTree);
    d.close();
    const r = baton('--db', path, 'gc', '--json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const { deleted } = JSON.parse(r.out) as { deleted: number };
    expect(deleted).toBe(200 * perTree);
    const after = new Database(path, { readonly: true });
    const left = after.prepare('SELECT count(*) FROM runs').pluck().get() as number;
    expect(left).toBe(runsBefore - deleted);
    // No event of a deleted run is left behind, and the file is sound.
    expect(
      after.prepare('SELECT count(*) FROM events WHERE run_id NOT IN (SELECT id FROM runs)').pluck().get(),
    ).toBe(0);
    expect(after.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    after.close();
    // Nothing expired is left: a second gc deletes nothing.
    expect(JSON.parse(baton('--db', path, 'gc', '--json').out)).toEqual({ deleted: 0, threads: 0 });
  });
});
