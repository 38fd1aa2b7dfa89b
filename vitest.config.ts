import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: media tests run ffmpeg, so two files at a time is the most the machine takes.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
