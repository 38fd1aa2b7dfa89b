import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const portPath = (dataDir: string) => join(dataDir, 'server-port');

/**
 * The port the server holding this data directory listens on, kept beside its lock for the CLI: a server started with
 * `PORT=8090 npm start` is found by `npx mediaplane ...` from another shell that does not have PORT set. Removed when
 * the process exits; read only while the lock's holder runs, so a leftover is never believed.
 */
export function recordServerPort(dataDir: string, port: number): void {
  // With DATABASE_URL and an S3 store nothing else may have made the data directory yet.
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(portPath(dataDir), `${port}\n`);
  process.once('exit', () => rmSync(portPath(dataDir), { force: true }));
}

export function recordedServerPort(dataDir: string): number | undefined {
  try {
    const port = Number(readFileSync(portPath(dataDir), 'utf8').trim());
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}
