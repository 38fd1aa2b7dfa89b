import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The operator's bearer token: MEDIAPLANE_ADMIN_TOKEN when set, otherwise generated once, kept in the data directory
 * (mode 600) and reported as `created` so the caller prints it once.
 */
export function resolveAdminToken(dataDir: string, fromEnv: string | undefined): { token: string; created: boolean; path?: string } {
  if (fromEnv) return { token: fromEnv, created: false };
  const path = join(dataDir, 'admin-token');
  if (existsSync(path)) return { token: readFileSync(path, 'utf8').trim(), created: false, path };
  mkdirSync(dataDir, { recursive: true });
  const token = `mpa_${randomBytes(32).toString('base64url')}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, created: true, path };
}
