import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests use the SDK's sources, as tsconfig.json's paths do (the CLI's build uses its compiled package).
  resolve: {
    alias: [
      { find: /^@mediaplane\/sdk$/, replacement: new URL('./sdk/src/index.ts', import.meta.url).pathname },
      { find: /^@mediaplane\/sdk\/node$/, replacement: new URL('./sdk/src/node.ts', import.meta.url).pathname },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/globalSetup.ts'],
    testTimeout: 60_000,
    // In CI only, a failed test runs once more: the suite is about 4,000 s of ffmpeg, Chromium and databases
    // on two cores, and the live media tests that race the wall clock (a recognizer keeping up with speech, a takeover,
    // an encoder finishing a segment before a stop) fail one run in several under that load. A test that fails twice
    // in a row still fails CI; each one seen failing once is listed as a bug or a timing to fix in the issue notes.
    retry: process.env.CI ? 1 : 0,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: media tests run ffmpeg, so two files at a time is the most the machine takes.
    maxWorkers: 2,
    // Files share their worker's modules instead of importing everything again (a minute and more of CI): a helper that
    // holds state across files (test/helpers/stores.ts's Swift) stops it in the file's afterAll.
    isolate: false,
    reporters: ['default'],
    // The platforms tests start log what an operator would see at info; warnings and errors are enough in a test run.
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  },
});
