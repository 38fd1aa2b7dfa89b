#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm ci` and `npm start`); when the sources changed since, runs them through
// tsx instead (development, tests), which starts slower because it compiles TypeScript on every run. The repository's
// tsconfig.json is named so that `@mediaplane/sdk` resolves to the SDK's sources then, from any working directory.
import { distIsCurrent } from '../scripts/build.mjs';

if (distIsCurrent()) {
  await import('../dist/cli.js');
} else {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
  await import('../src/cli.ts');
}
