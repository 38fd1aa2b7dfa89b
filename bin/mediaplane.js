#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step): tsx registers the loader, then the CLI starts.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
