import { resolve } from 'node:path';

/** Every environment variable the platform reads, parsed and validated once. */
export interface Config {
  port: number;
  host: string;
  /** Public base URL; tenant hosts are `{tenant}.{hostname of this URL}`. */
  publicUrl: URL;
  dataDir: string;
  /** PostgreSQL connection string; unset means embedded PGlite under `dataDir`. */
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  oauthTokenTtlSeconds: number;
  logLevel: string;
  /** `all` (default): API and workers in one process; `api` or `worker` to scale them apart. */
  role: 'all' | 'api' | 'worker';
  /** `s3://bucket?endpoint=...&region=...&forcePathStyle=true`; unset means files under `<dataDir>/objects`. */
  storageUrl: string | undefined;
  /** Key for the embedded store's signed URLs; unset means one generated once and kept in the data directory. */
  urlSigningSecret: string | undefined;
  /** Forces the upload part size in bytes (tests, tuning); unset means chosen from the file size. */
  uploadPartSize: number | undefined;
  /** Uploads never completed are cleaned up this many hours after they started (fractions allowed). */
  uploadTtlHours: number;
  /** Lifetime of presigned part upload URLs. */
  uploadUrlTtlSeconds: number;
  /** Lifetime of file preview (download) links. */
  previewTtlSeconds: number;
}

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${value}"`);
  return n;
}

function role(value: string | undefined): Config['role'] {
  if (!value) return 'all';
  if (value === 'all' || value === 'api' || value === 'worker') return value;
  throw new Error(`MEDIAPLANE_ROLE must be all, api or worker, got "${value}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const publicUrl = new URL(env.MEDIAPLANE_PUBLIC_URL ?? `http://localhost:${env.PORT ?? 8080}`);
  return {
    port: int('PORT', env.PORT, 8080),
    host: env.HOST ?? '0.0.0.0',
    publicUrl,
    dataDir: resolve(env.MEDIAPLANE_DATA_DIR ?? './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    adminToken: env.MEDIAPLANE_ADMIN_TOKEN || undefined,
    oauthTokenTtlSeconds: int('MEDIAPLANE_OAUTH_TOKEN_TTL', env.MEDIAPLANE_OAUTH_TOKEN_TTL, 86400),
    logLevel: env.LOG_LEVEL ?? 'info',
    role: role(env.MEDIAPLANE_ROLE),
    storageUrl: env.MEDIAPLANE_STORAGE_URL || undefined,
    urlSigningSecret: env.MEDIAPLANE_URL_SIGNING_SECRET || undefined,
    uploadPartSize: int('MEDIAPLANE_UPLOAD_PART_SIZE', env.MEDIAPLANE_UPLOAD_PART_SIZE, 0) || undefined,
    uploadTtlHours: positive('MEDIAPLANE_UPLOAD_TTL_HOURS', env.MEDIAPLANE_UPLOAD_TTL_HOURS, 24),
    uploadUrlTtlSeconds: int('MEDIAPLANE_UPLOAD_URL_TTL_SECONDS', env.MEDIAPLANE_UPLOAD_URL_TTL_SECONDS, 6 * 3600),
    previewTtlSeconds: int('MEDIAPLANE_PREVIEW_TTL_SECONDS', env.MEDIAPLANE_PREVIEW_TTL_SECONDS, 3600),
    ...overrides,
  };
}
