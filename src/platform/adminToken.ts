import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const tokenPath = (dataDir: string) => join(dataDir, 'admin-token');

/** The token a server generated and stored in the data directory, if any. */
export function storedAdminToken(dataDir: string): string | undefined {
  const path = tokenPath(dataDir);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}

/**
 * The operator's bearer token: MEDIAPLANE_ADMIN_TOKEN when set, otherwise generated once, kept in the data directory
 * (mode 600) and reported as `created` so the caller prints it once.
 */
export function resolveAdminToken(dataDir: string, fromEnv: string | undefined): { token: string; created: boolean; path?: string } {
  if (fromEnv) return { token: fromEnv, created: false };
  const path = tokenPath(dataDir);
  const stored = storedAdminToken(dataDir);
  if (stored) return { token: stored, created: false, path };
  mkdirSync(dataDir, { recursive: true });
  const token = `mpa_${randomBytes(32).toString('base64url')}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, created: true, path };
}
