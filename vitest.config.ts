import { defineConfig } from 'vitest/config';

/**
 * Two lanes. `fast`: unit and store-contract tests beside the code — no child processes, no
 * browser, no package install (`npm run test:fast`, the lane to run while working, and the lane CI
 * repeats on Node 22 and 24). `e2e`: everything that starts real processes — the CLI, crash and
 * chaos tests, the demo, the HTTP checklist, the installed package. `npm test` runs both.
 *
 * A test beside the code that must start processes is named `*.process.test.ts` and runs in `e2e`.
 * The fast lane shares one module graph per worker (below); a fast test that needs a fresh one is
 * named `*.isolated.test.ts` and runs in `fast-isolated`, which `test:fast` includes.
 */
const PROCESS_TESTS = 'src/**/*.process.test.ts';
const ISOLATED_TESTS = 'src/**/*.isolated.test.ts';

export default defineConfig({
  test: {
    // Crash and HTTP tests spawn real processes; give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['src/**/*.test.ts'],
          exclude: [PROCESS_TESTS, ISOLATED_TESTS],
          // Unit tests share no global state (no chdir, no TZ, no fake global timers: time comes
          // from the injected clock), so one module graph per worker is safe. Re-importing it for
          // each of ~95 files cost ~35 s of the lane's 65 s on this 2-core machine.
          isolate: false,
        },
      },
      {
        extends: true,
        // Worker-thread tests and tests that need a fresh module graph: one graph per file.
        test: { name: 'fast-isolated', include: [ISOLATED_TESTS] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/**/*.test.ts', PROCESS_TESTS] },
      },
    ],
  },
});
