/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core (never a downloaded
 * browser), against `serveHttp` on loopback over a real SQLite file. The research demo runs in its
 * own process while the run page follows it live (budget bars, checkpoint ticks, status); a question
 * is answered from the inbox and the run continues; a lost race says who answered; a delivery's
 * countdown reaches zero and it is delivered; every page passes an axe-core accessibility check
 * and is usable at phone width; the token, read-only switch and a base path behave. Screenshots of
 * each page go to test-artifacts/dashboard/. Nothing sleeps: the test waits on the page's DOM
 * (playwright's waiting) or on the store.
 *
 * Without /usr/bin/chromium it skips with a warning, and fails under CI=true.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { researchFlow } from '../examples/research/flow.ts';
import { createClient } from '../src/client/index.ts';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type Baton, createBaton, defineTask, SCHEDULE_JSON_SCHEMA } from '../src/index.ts';
import { defineTool } from '../src/tools/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

// What the functions run inside the page touch (this project's types have no DOM library).
interface PageElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { length: number };
  documentElement: { scrollWidth: number };
};
declare const window: { innerWidth: number; axe: { run(): Promise<{ violations: unknown[] }> } };

const CHROMIUM = '/usr/bin/chromium';
const ROOT = join(import.meta.dirname, '..');
const ARTIFACTS = join(ROOT, 'test-artifacts', 'dashboard');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === 'true')
  throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install -y chromium (CI=true never skips)`);
if (!haveChromium)
  console.warn(`dashboard browser tests skipped: no ${CHROMIUM} (apt-get install -y chromium)`);

const TOKEN = 'dashboard-test-token-0123456789';
const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** Attempt 1 finds something and stalls past its 400 ms timeout; it asks a human; attempt 2 finishes. */
const needsHuman = defineTask({
  name: 'needs-human',
  timeout: '400ms',
  retry: { maxRetries: 0, acceptPartial: true },
  escalation: { ask: true, decisionTimeout: '10m' },
  run: async (_: unknown, ctx) => {
    if (ctx.attempt === 1) {
      await ctx.partial({ clue: 'the lease table grows' });
      await ctx.delay(60_000);
    }
    return { answer: 'found it on attempt 2' };
  },
});

const quickDraw = defineTool({
  name: 'quick_draw',
  inputSchema: {
    type: 'object',
    properties: { prompt: { type: 'string' }, schedule: SCHEDULE_JSON_SCHEMA },
    required: ['prompt'],
  },
  handler: async (args: { prompt: string }) => ({ image: args.prompt }),
});

let dir: string;
/** Serves the dashboard (no worker: the demo's steps run in the demo's process). */
let server: Baton;
/** Executes this test's own tasks on the same database. */
let worker: Baton;
let http: HttpServer;
let browser: Browser;
let demo: ChildProcess | undefined;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  return vi.waitFor(
    async () => {
      const v = await probe();
      if (v === undefined) throw new Error(`still waiting for ${what}`);
      return v;
    },
    { timeout: 60_000, interval: 50 },
  );
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** axe-core in the page: no violations at all (WCAG 2 A/AA rules and best practices). */
async function expectAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run();
    return (
      result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>
    ).map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target) }));
  });
  expect(violations).toEqual([]);
}

async function newPage(width = 1280): Promise<Page> {
  // bypassCSP only so axe-core can be injected; the app itself runs under the strict policy.
  const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  (page as Page & { errors: string[] }).errors = errors;
  return page;
}

const errorsOf = (page: Page) => (page as Page & { errors: string[] }).errors;

describe.skipIf(!haveChromium)('the dashboard in Chromium', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-dashboard-'));
    const db = join(dir, 'baton.db');
    server = createBaton({ store: db, worker: false, tasks: [...researchFlow.tasks, needsHuman, quickDraw] });
    worker = createBaton({ store: db, tasks: [needsHuman, quickDraw] });
    await worker.ready();
    http = await serveHttp(server, { dashboard: true });
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });

  afterAll(async () => {
    demo?.kill('SIGKILL');
    await browser?.close();
    await http?.close();
    await worker?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows the research demo live: checkpoint ticks, step budgets and statuses update without a reload', async () => {
    demo = spawn(
      process.execPath,
      ['--import', TSX_LOADER, join(ROOT, 'examples/research/demo.ts'), '--db', join(dir, 'baton.db')],
      { cwd: dir, stdio: 'ignore' },
    );
    const run = await until(
      'the demo run',
      async () => (await server.listRuns({ name: 'research-demo' }))[0],
    );
    const page = await newPage();
    await page.goto(`${http.url}/dashboard/runs/${run.id}`);
    await page.getByRole('heading', { level: 1 }).filter({ hasText: run.id }).waitFor();
    await expect.poll(() => page.locator('.live').textContent()).toBe('live');
    const ticksAtFirst = await page.locator('.timeline svg .checkpoint').count();
    // Live: more checkpoint ticks arrive over SSE while the researchers read.
    await page.waitForFunction(
      (n) => document.querySelectorAll('.timeline svg .checkpoint').length > n,
      ticksAtFirst,
      { timeout: 60_000 },
    );
    // A step's budget bar: its meter moves as its budget is spent.
    const papersMeter = page.locator('tr[data-step="papers"] [role="meter"]');
    await papersMeter.waitFor();
    await page.waitForFunction(
      () =>
        Number(
          document.querySelector('tr[data-step="papers"] [role="meter"]')?.getAttribute('aria-valuenow'),
        ) > 0,
      undefined,
      { timeout: 60_000 },
    );
    // The retry of the papers researcher (timed out, then ×2) is its own lane.
    await page.locator('[data-lane$=".papers#2"]').waitFor({ timeout: 60_000 });
    await shot(page, 'run-live');
    // The flow ends once its scheduled deliveries are made; the page shows it without a reload.
    await page.locator('.run-header .badge', { hasText: 'succeeded' }).first().waitFor({ timeout: 60_000 });
    expect(await page.locator('.flow-graph .node').count()).toBe(6);
    expect(await page.getByTestId('attempt').textContent()).toBe('6 steps');
    await shot(page, 'run');
    await expectAccessible(page);

    // Tabs: each is reachable by keyboard and its panel holds the run's records.
    await page.getByRole('tab', { name: 'Checkpoints' }).click();
    await expect.poll(() => page.locator('.checkpoint-item').count()).toBeGreaterThan(5);
    await page.getByRole('tab', { name: 'Checkpoints' }).press('ArrowRight');
    await expect.poll(() => page.url()).toContain('tab=partials');
    await page.getByRole('tab', { name: 'Context plan' }).click();
    await page.locator('.context-plan').first().waitFor();
    await page.getByRole('tab', { name: 'Events' }).click();
    // The event-type filter is in the URL and hides those events from the list and timeline.
    await page.getByRole('checkbox', { name: /^checkpoint:saved/ }).uncheck();
    await expect.poll(() => page.url()).toContain('hide=checkpoint%3Asaved');
    expect(await page.locator('.timeline svg .checkpoint').count()).toBe(0);
    expect(await page.getByTestId('events').textContent()).not.toContain('checkpoint:saved');
    // A shared URL opens the same view.
    const again = await newPage();
    await again.goto(page.url());
    await again.getByTestId('events').waitFor();
    expect(await again.locator('.timeline svg .checkpoint').count()).toBe(0);
    await again.context().close();
    expect(errorsOf(page)).toEqual([]);
    await page.context().close();
  });

  it('answers a question from the inbox and the run continues; a lost race says who answered', async () => {
    const first = await worker.start(needsHuman, {});
    const second = await worker.start(needsHuman, {});
    const third = await worker.start(needsHuman, {});
    for (const r of [first, second, third])
      await until('the question', async () =>
        (await server.getRun(r.id))?.waitReason === 'decision' ? true : undefined,
      );
    const page = await newPage();
    await page.goto(`${http.url}/dashboard/decisions`);
    const card = page.locator('article.question', { hasText: first.id });
    await card.waitFor();
    expect(await card.locator('.policy-answer').textContent()).toBe('continue_partial');
    expect(await card.locator('time').textContent()).toMatch(/^in (9|10) min/);
    await card.locator('summary').click();
    expect(await card.locator('pre.json').textContent()).toContain('the lease table grows');
    await shot(page, 'decisions');
    await expectAccessible(page);

    await card.locator('button[data-choice="retry_extended"]').click();
    await page.getByText(`Answered ${first.id}: retry_extended. The run continues.`).waitFor();
    expect((await first.result()).status).toBe('succeeded');
    await page.locator('article.question', { hasText: first.id }).waitFor({ state: 'detached' });

    // "Different mode" answers with the mode chosen beside it.
    const modeCard = page.locator('article.question', { hasText: third.id });
    const modes = await modeCard.locator('select option').allTextContents();
    expect(modes.length).toBeGreaterThan(0);
    await modeCard.locator('select').selectOption(modes.at(-1) as string);
    await modeCard.locator('button[data-choice="different_mode"]').click();
    await page.getByText(`Answered ${third.id}: different_mode. The run continues.`).waitFor();
    expect((await third.result()).status).toBe('succeeded');

    // Someone else answers the second question while this operator's view is stale (its live
    // stream is cut here, so the question stays on screen as it would over a slow network).
    const stale = await newPage();
    await stale.route('**/events', (route) => route.abort());
    await stale.goto(`${http.url}/dashboard/decisions`);
    const otherCard = stale.locator('article.question', { hasText: second.id });
    await otherCard.waitFor();
    await createClient({ baseUrl: http.url }).decide(second.id, 'continue_partial');
    await otherCard.locator('button[data-choice="retry_extended"]').click();
    await stale
      .getByText(new RegExp(`Too late: ${second.id} was already answered by http \\(continue_partial\\)`))
      .waitFor();
    expect((await second.result()).status).toBe('partial');
    await stale.context().close();

    // The run page shows the run that continued.
    await page.goto(`${http.url}/dashboard/runs/${first.id}`);
    await page.locator('.run-header .badge', { hasText: 'succeeded' }).first().waitFor();
    expect(await page.getByTestId('attempt').textContent()).toBe('2 of 2');
    await page.locator(`[data-lane="${first.id}#2"]`).waitFor();
    expect(errorsOf(page)).toEqual([]);
    await page.context().close();
  });

  it('counts a delivery down to zero and shows it delivered, with the expression and both instants', async () => {
    const page = await newPage();
    await page.goto(`${http.url}/dashboard/deliveries`);
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    const run = await worker.start(quickDraw, {
      prompt: 'a cat',
      schedule: { when: 'in 3 seconds', timezone: 'Asia/Shanghai' },
    } as never);
    const row = page.locator(`tr[data-run="${run.id}"]`);
    // The tool finished at once: its result is held until the time the user said.
    await page.locator(`tr[data-run="${run.id}"][data-state="held"]`).waitFor();
    expect(await row.textContent()).toContain('“in 3 seconds”');
    expect(await row.textContent()).toContain('Asia/Shanghai');
    expect(await row.textContent()).toContain('UTC');
    expect(await row.locator('.countdown').textContent()).toMatch(/^(in [0-3] s|now)$/);
    await shot(page, 'deliveries');
    await expectAccessible(page);
    // The countdown reaches zero, then the row turns delivered (live, no reload).
    await page.waitForFunction(
      (id) => {
        const text = document.querySelector(`tr[data-run="${id}"] .countdown`)?.textContent ?? '';
        return text === 'now' || text.includes('ago') || text.startsWith('delivered');
      },
      run.id,
      { timeout: 30_000 },
    );
    await page.locator(`tr[data-run="${run.id}"][data-state="delivered"]`).waitFor({ timeout: 30_000 });
    expect(errorsOf(page)).toEqual([]);
    await page.context().close();
  });

  it('lists runs with filters in the URL, pages on the server, and confirms a bulk cancel with its count', async () => {
    const sleeper = defineTask({
      name: 'sleeper',
      timeout: '1h',
      run: (_: unknown, ctx) => ctx.delay(3_600_000),
    });
    worker.register(sleeper);
    server.register(sleeper);
    for (let i = 0; i < 3; i++) await worker.start(sleeper, {});
    const page = await newPage();
    await page.goto(`${http.url}/dashboard/runs`);
    await page.locator('table.runs tbody tr').first().waitFor();
    await page.getByLabel('Task').fill('sleeper');
    await page.getByLabel('Task').press('Enter');
    await expect.poll(() => page.url()).toContain('name=sleeper');
    await expect.poll(() => page.locator('table.runs tbody tr').count()).toBe(3);
    await shot(page, 'runs');
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Cancel…' }).click();
    await page.getByText('This will cancel 3 runs (3 matched).').waitFor();
    await page.getByRole('button', { name: 'Cancel 3 runs' }).click();
    await page.getByText('Cancelled 3 runs').waitFor();
    expect((await server.listRuns({ name: 'sleeper', status: 'cancelled' })).length).toBe(3);
    // The filter survives a reload: it is the URL.
    await page.reload();
    await expect
      .poll(() => page.locator('table.runs tbody .badge', { hasText: 'cancelled' }).count())
      .toBe(3);
    expect(errorsOf(page)).toEqual([]);
    await page.context().close();
  });

  it('overview, and every page usable at phone width', async () => {
    const page = await newPage();
    await page.goto(`${http.url}/dashboard/`);
    await page.getByRole('list', { name: 'Runs by status' }).waitFor();
    await shot(page, 'overview');
    await expectAccessible(page);
    const demoRun = (await server.listRuns({ name: 'research-demo' }))[0];
    const phone = await newPage(390);
    for (const path of ['/', '/runs', `/runs/${demoRun?.id}`, '/decisions', '/deliveries']) {
      await phone.goto(`${http.url}/dashboard${path}`);
      await phone.locator('main h1').first().waitFor();
      await phone.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      // Nothing wider than the screen except inside the scrollable tables and timeline.
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `horizontal overflow on ${path}`).toBeLessThanOrEqual(0);
    }
    await phone.goto(`${http.url}/dashboard/runs/${demoRun?.id}`);
    await phone.locator('.run-header').waitFor();
    await shot(phone, 'run-phone');
    expect(errorsOf(page)).toEqual([]);
    expect(errorsOf(phone)).toEqual([]);
    await page.context().close();
    await phone.context().close();
  });

  it('asks for the token when the API needs one, is read-only on request, and works under a base path', async () => {
    const guarded = await serveHttp(server, {
      dashboard: true,
      token: TOKEN,
      readOnly: true,
      basePath: '/ops',
    });
    try {
      const page = await newPage();
      await page.goto(`${guarded.url}/ops/dashboard/runs`);
      await page.getByLabel(/API token/).fill(TOKEN);
      await page.getByRole('button', { name: 'Open the dashboard' }).click();
      await page.locator('table.runs tbody tr').first().waitFor();
      expect(await page.getByRole('button', { name: 'Cancel…' }).count()).toBe(0);
      expect(await page.locator('.top .badge').textContent()).toBe('read-only');
      await page.goto(`${guarded.url}/ops/dashboard/decisions`);
      await page.getByRole('heading', { name: 'Decisions' }).waitFor();
      // The token is kept for the tab: the data loads without asking again.
      await page
        .getByText(/No question is waiting|If nobody answers/)
        .first()
        .waitFor();
      // The data itself needs the token; the server refuses changes whoever asks.
      expect((await fetch(`${guarded.url}/ops/runs`)).status).toBe(401);
      const refused = await fetch(`${guarded.url}/ops/bulk/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ filter: {}, dryRun: true }),
      });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: string }).error).toBe('READ_ONLY');
      expect(errorsOf(page).filter((e) => !e.includes('401'))).toEqual([]);
      await page.context().close();
    } finally {
      await guarded.close();
    }
  });
});
