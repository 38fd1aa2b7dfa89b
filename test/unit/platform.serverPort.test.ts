import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { recordedServerPort, recordServerPort } from '../../src/platform/serverPort.ts';

const root = mkdtempSync(join(tmpdir(), 'mediaplane-server-port-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// On PostgreSQL with an S3 store nothing else makes the data directory before the server records its port there.
it('records the port in a data directory that does not exist yet, making it', () => {
  const dataDir = join(root, 'not', 'made', 'yet');
  recordServerPort(dataDir, 8123);
  expect(existsSync(dataDir)).toBe(true);
  expect(recordedServerPort(dataDir)).toBe(8123);
});
