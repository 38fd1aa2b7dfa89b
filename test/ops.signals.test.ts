import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, mediaplane, type Run } from './helpers/process.ts';
import { PROCESS_START_TIMEOUT_MS, until } from './helpers/until.ts';

// A container's PID 1 gets no default action for SIGTERM: a signal that came before `serve` had its handler would be
// ignored, and the container would wait for SIGKILL. So the handler is there before the platform's modules load.
describe('serve handles SIGTERM from its first moment', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-signal-'));
  let server: Run | undefined;
  afterAll(() => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a SIGTERM while the first start loads the platform stops it gracefully: exit 0, the data directory released', async () => {
    const port = await freePort();
    server = mediaplane(['serve'], { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir, MEDIAPLANE_SHUTDOWN_TIMEOUT_SECONDS: '300' });
    // Printed before the modules load (they take a second or more): the signal comes while they do.
    await until(server.output, (out) => out.includes('First start: creating the embedded database'), { timeoutMs: PROCESS_START_TIMEOUT_MS });
    server.child.kill('SIGTERM');
    const exit = await server.exit;
    // Killed by the signal's default action, it would have no exit code; handled, it exits 0 once the start it
    // interrupted has been closed again.
    expect(exit, server.output()).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'mediaplane.lock'))).toBe(false);
  }, 360_000);
});
