import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TenantCliSettings } from '../../config.ts';
import { CliError } from './output.ts';

/** What `mediaplane login` keeps: where the platform answers and the tenant's credentials. */
export interface Profile {
  url: string;
  tenantId: string;
  apiKey: string;
}

interface ProfilesFile {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';

export const profilesPath = (settings: TenantCliSettings) => join(settings.configDir, 'profiles.json');

export function readProfiles(settings: TenantCliSettings): ProfilesFile {
  const path = profilesPath(settings);
  if (!existsSync(path)) return { profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ProfilesFile>;
    return { profiles: parsed.profiles && typeof parsed.profiles === 'object' ? parsed.profiles : {} };
  } catch (e) {
    throw new CliError(`${path} is not valid JSON (${(e as Error).message}); fix it or remove it and log in again.`);
  }
}

/**
 * Stores a profile, readable and writable by its owner only (0600, in a 0700 directory): it holds an API key. Written
 * to a new file that replaces the old one, so that a concurrent reader never sees half a file.
 */
export function saveProfile(settings: TenantCliSettings, name: string, profile: Profile): string {
  const file = readProfiles(settings);
  file.profiles[name] = profile;
  mkdirSync(settings.configDir, { recursive: true, mode: 0o700 });
  const path = profilesPath(settings);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFileSync is narrowed by the umask only; make it exact whatever the umask.
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}

export interface Credentials extends Profile {
  /** The profile they came from (with the environment's overrides), if any. */
  profile: string;
}

/**
 * The credentials a command uses: the profile named by `--profile`, else `MEDIAPLANE_PROFILE`, else `default`; each
 * of `MEDIAPLANE_URL`, `MEDIAPLANE_TENANT_ID` and `MEDIAPLANE_API_KEY` overrides the profile's value.
 */
export function resolveCredentials(settings: TenantCliSettings, flagProfile?: string): Credentials {
  const name = flagProfile ?? settings.profile ?? DEFAULT_PROFILE;
  const stored = readProfiles(settings).profiles[name];
  if (!stored && name !== DEFAULT_PROFILE)
    throw new CliError(`No profile named "${name}" in ${profilesPath(settings)}; run \`mediaplane login --profile ${name} ...\`.`);
  const url = settings.url ?? stored?.url;
  const tenantId = settings.tenantId ?? stored?.tenantId;
  const apiKey = settings.apiKey ?? stored?.apiKey;
  if (!url || !tenantId || !apiKey) {
    throw new CliError(
      'Not logged in: run `mediaplane login --url URL --tenant-id ID --api-key KEY`, ' + 'or set MEDIAPLANE_URL, MEDIAPLANE_TENANT_ID and MEDIAPLANE_API_KEY.',
    );
  }
  return { profile: name, url, tenantId, apiKey };
}
