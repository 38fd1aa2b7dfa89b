#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm ci` and `npm start`); when the sources changed since, runs them through
// tsx instead (development, tests), which starts slower because it compiles TypeScript on every run.
import { distIsCurrent } from '../scripts/build.mjs';

if (distIsCurrent()) {
  await import('../dist/cli.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
