import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * What a process runs (`MEDIAPLANE_ROLE`): `api` (HTTP), `worker` (jobs and sweepers), `live` (live channels); `all`
 * runs every role in one process. A manifest's workers name theirs. Named apart from `platform/roles.ts`'s `Role`, the
 * access roles of API keys.
 */
export const PROCESS_ROLES = ['api', 'worker', 'live'] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];

/** Every environment variable the platform reads, parsed and validated once. */
export interface Config {
  port: number;
  host: string;
  /**
   * Where a `worker` or `live` process, which serves no API, answers `/healthz`, `/readyz` and `/metrics` (a container's
   * health check, a scraper); unset: such a process opens no HTTP port. `api` and `all` answer them on `port`.
   */
  healthPort: number | undefined;
  /** Public base URL; tenant hosts are `{tenant}.{hostname of this URL}`. */
  publicUrl: URL;
  dataDir: string;
  /** PostgreSQL connection string; unset means embedded PGlite under `dataDir`. */
  databaseUrl: string | undefined;
  /** PostgreSQL connections per process. */
  databasePoolSize: number;
  adminToken: string | undefined;
  /** A bearer token that reads `/metrics` only (the admin token reads it too). */
  metricsToken: string | undefined;
  oauthTokenTtlSeconds: number;
  logLevel: string;
  /** `all` (default): every role in one process; `api`, `worker` or `live` to scale them apart (`PROCESS_ROLES`). */
  role: 'all' | ProcessRole;
  /** Transcodes one worker process runs at once; each ffmpeg already uses every core. */
  transcodeConcurrency: number;
  /** A worker renews its claim on an output it transcodes; a claim not renewed for this long means the worker died. */
  transcodeLeaseSeconds: number;
  /** How often a worker re-queues outputs of a dead worker and removes expired outputs. */
  sweepIntervalMs: number;
  /** A video source longer than this is encoded in chunks by any worker (the chunked path); 0 turns it off. */
  chunkThresholdSeconds: number;
  /** Source seconds per chunk of the chunked path (rounded up to whole segments of the preset). */
  chunkSeconds: number;
  /** S3 region when `MEDIAPLANE_STORAGE_URL` names none. */
  awsRegion: string;
  /** `s3://bucket?endpoint=...&region=...&forcePathStyle=true`; unset means files under `<dataDir>/objects`. */
  storageUrl: string | undefined;
  /** Key for the embedded store's signed URLs; unset means one generated once and kept in the data directory. */
  urlSigningSecret: string | undefined;
  /** DRM master key (32 bytes, hex or base64): seals content keys at rest, signs DRM tokens; unset means one generated once in the data directory. */
  drmMasterKey: string | undefined;
  /** Forces the upload part size in bytes (tests, tuning); unset means chosen from the file size. */
  uploadPartSize: number | undefined;
  /** Uploads never completed are cleaned up this many hours after they started (fractions allowed). */
  uploadTtlHours: number;
  /** Lifetime of presigned part upload URLs. */
  uploadUrlTtlSeconds: number;
  /** A part body that sends nothing for this long is dropped (embedded store), freeing what it held. */
  uploadIdleTimeoutSeconds: number;
  /** Lifetime of file preview (download) links. */
  previewTtlSeconds: number;
  /** Events (and their deliveries) older than this many days are deleted once delivered; 0 keeps them forever. */
  eventRetentionDays: number;
  /** Fetch tenant-given URLs (overlay pictures, file imports) from private, loopback and link-local addresses too. */
  fetchAllowPrivate: boolean;
  /** A file imported from a URL larger than this many bytes ends in Error. */
  importMaxBytes: number;
  /** Memory for rendered list pages (`src/platform/listCache.ts`), per process; 0 turns the cache off. */
  listCacheBytes: number;
  /** Requests per tenant per minute (`src/platform/rateLimit.ts`); 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Beacon requests per tenant per minute on the public player ingestion route; 0: not limited. */
  beaconRateLimitPerMinute: number;
  /** JSON request bodies larger than this are refused with 413 before they are read. */
  bodyLimitBytes: number;
  /** How long the rest of a refused request body is read and discarded before the refusal is sent (`platform/bodyDrain.ts`). */
  bodyDrainMs: number;
  /** Check every documented response against the OpenAPI document (tests; platform/responseCheck.ts). */
  responseCheck: boolean;
  /** `serve` exits this long after SIGTERM/SIGINT even if requests or jobs have not finished by then. */
  shutdownTimeoutSeconds: number;
  webhooks: WebhookConfig;
  live: LiveConfig;
}

/** Live channels (`src/modules/live`); decisions in docs/decisions/live.md. */
interface LiveConfig {
  /** The shared RTMP ingest of a live process: address and port (0 = any free port, tests). */
  rtmpHost: string;
  rtmpPort: number;
  /** What encoders are told to push to, before `/<streamKey>`; unset means `rtmp://<public host>:<rtmpPort>/live`. */
  rtmpPublicUrl: string | undefined;
  /** SRT ingest: one listener per SRT channel and input, on ports `srtPortMin..srtPortMax` kept for the channel's life. */
  srtHost: string;
  srtPortMin: number;
  srtPortMax: number;
  /** The host encoders are told to push SRT to; unset means the public URL's host. */
  srtPublicHost: string | undefined;
  /** A live process owns a channel through a lease on the database's clock, renewed every `pollMs`. */
  leaseSeconds: number;
  /** How often a live process claims channels to run, renews its leases and applies starts and stops. */
  pollMs: number;
  /** Channels one live process runs at once; others wait for a process with room. */
  maxChannels: number;
  /**
   * One live process runs channels at a time; the others stand by and take every channel over when it dies. For a
   * shared ingest address behind a layer-4 balancer, which cannot route by stream key (docs/decisions/live.md, "Failover").
   */
  activeStandby: boolean;
  /** Restream destinations on private, loopback or link-local addresses are refused unless this is set. */
  restreamAllowPrivate: boolean;
  /** Segment duration of the live outputs. */
  segmentSeconds: number;
  /** Segments listed in the live playlists: the window a player can seek back in. */
  windowSegments: number;
  /** `ReducedLatency` channels: duration of the LL-HLS parts and LL-DASH chunks (seconds, at most half a segment). */
  partSeconds: number;
  /** Local scratch space for the encoders' output before it is published to the store. */
  workDir: string;
  /** An `ensureChannel` event starts its channel this long before its `start` (docs/decisions/live.md, "Events"). */
  eventLeadSeconds: number;
  /**
   * How long a channel's published segments stay in the store (its timeline, `src/modules/live/timeline.ts`): the
   * past a recording or an event's catch-up can still reach. Disk cost in docs/decisions/recorder.md.
   */
  retentionSeconds: number;
  /**
   * A channel's on-air session (docs/decisions/live.md, "Sessions") goes on while its encoder has been gone for less
   * than this: a dropped encoder that comes back within it continues the session (and its `autoRecord` recording).
   */
  autoRecordReconnectSeconds: number;
  /**
   * How many rungs of a watermarked channel's ladder (`isWatermarkProtected`) get their two marked variants: each one
   * costs two more x264 encodes of its size (BENCHMARKS.md "watermark"). Chosen from the smallest rung of at least
   * 360p upwards, then downwards (src/modules/watermarking/channels.ts).
   */
  watermarkRungs: number;
  /** Where the live captions' speech models are: one directory per language (`en-us`), as Debian's pocketsphinx-* install them. */
  captionModelsDir: string;
}

/** Webhook delivery; the retry schedule is described in docs/decisions/notifications.md. */
export interface WebhookConfig {
  /** A delivery attempt with no complete 200 answer within this time is a failed attempt. */
  timeoutMs: number;
  /** Failed deliveries are retried for this long; then the webhook turns `Unhealthy`. */
  retryPeriodSeconds: number;
  /** First retry delay; each further one doubles, up to `retryMaxDelayMs`, with jitter. */
  retryBaseMs: number;
  retryMaxDelayMs: number;
  /** Allow delivery to private, loopback and link-local addresses (local development, tests). */
  allowPrivate: boolean;
  /** Webhooks delivered to at once by one worker process. */
  concurrency: number;
  /** How often the dispatcher looks for work when no notification wakes it. */
  pollMs: number;
}

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

function bool(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`${name} must be true or false, got "${value}"`);
}

function positive(name: string, value: string | undefined, fallback: number): number {
  const n = int(name, value, fallback);
  if (n === 0) throw new Error(`${name} must be greater than 0`);
  return n;
}

/** A positive number, fractions allowed. */
function positiveNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${value}"`);
  return n;
}

function port(name: string, value: string | undefined, fallback: number): number {
  const n = int(name, value, fallback);
  if (n > 65535) throw new Error(`${name} must be a port number (0-65535), got "${value}"`);
  return n;
}

function rtmpUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const url = new URL(value);
  if (url.protocol !== 'rtmp:' && url.protocol !== 'rtmps:') throw new Error(`MEDIAPLANE_RTMP_PUBLIC_URL must be an rtmp:// URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

function role(value: string | undefined): Config['role'] {
  if (!value) return 'all';
  if (value === 'all' || (PROCESS_ROLES as readonly string[]).includes(value)) return value as Config['role'];
  throw new Error(`MEDIAPLANE_ROLE must be all, api, worker or live, got "${value}"`);
}

/**
 * The ffmpeg and ffprobe to run (`FFMPEG_PATH`, `FFPROBE_PATH`). Read at each run, not once at start: the media
 * pipeline is a library used without a loaded Config (tests, bench), and an operator may fix a path without a restart.
 */
export const mediaTools = (env: NodeJS.ProcessEnv = process.env): { ffmpeg: string; ffprobe: string; recognizer: string } => ({
  ffmpeg: env.FFMPEG_PATH || 'ffmpeg',
  ffprobe: env.FFPROBE_PATH || 'ffprobe',
  // Live captions' speech recognizer (Debian's pocketsphinx).
  recognizer: env.POCKETSPHINX_PATH || 'pocketsphinx_continuous',
});

/** Checked at start, so that a wrong key stops the process instead of failing every license. */
function drmMasterKey(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const t = v.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? 32 : Buffer.from(t, 'base64').length;
  if (bytes !== 32) throw new Error('MEDIAPLANE_DRM_MASTER_KEY must be 32 bytes, written as 64 hex digits or base64');
  return t;
}

/** The process's environment with some variables set as if they were in it (the CLI's `--role`). */
export const environmentWith = (vars: Record<string, string | undefined>): NodeJS.ProcessEnv => ({ ...process.env, ...vars });

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const publicUrl = new URL(env.MEDIAPLANE_PUBLIC_URL ?? `http://localhost:${env.PORT ?? 8080}`);
  const dataDir = resolve(env.MEDIAPLANE_DATA_DIR ?? './data');
  return {
    port: int('PORT', env.PORT, 8080),
    host: env.HOST ?? '0.0.0.0',
    healthPort: env.MEDIAPLANE_HEALTH_PORT ? port('MEDIAPLANE_HEALTH_PORT', env.MEDIAPLANE_HEALTH_PORT, 0) : undefined,
    publicUrl,
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    databasePoolSize: positive('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE, 10),
    adminToken: env.MEDIAPLANE_ADMIN_TOKEN || undefined,
    metricsToken: env.MEDIAPLANE_METRICS_TOKEN || undefined,
    oauthTokenTtlSeconds: int('MEDIAPLANE_OAUTH_TOKEN_TTL', env.MEDIAPLANE_OAUTH_TOKEN_TTL, 86400),
    logLevel: env.LOG_LEVEL ?? 'info',
    role: role(env.MEDIAPLANE_ROLE),
    transcodeConcurrency: Math.max(1, int('MEDIAPLANE_TRANSCODE_CONCURRENCY', env.MEDIAPLANE_TRANSCODE_CONCURRENCY, 1)),
    transcodeLeaseSeconds: positive('MEDIAPLANE_TRANSCODE_LEASE_SECONDS', env.MEDIAPLANE_TRANSCODE_LEASE_SECONDS, 30),
    sweepIntervalMs: positive('MEDIAPLANE_SWEEP_INTERVAL_MS', env.MEDIAPLANE_SWEEP_INTERVAL_MS, 10_000),
    chunkThresholdSeconds: int('MEDIAPLANE_CHUNK_THRESHOLD_SECONDS', env.MEDIAPLANE_CHUNK_THRESHOLD_SECONDS, 240),
    chunkSeconds: positive('MEDIAPLANE_CHUNK_SECONDS', env.MEDIAPLANE_CHUNK_SECONDS, 30),
    awsRegion: env.AWS_REGION || 'us-east-1',
    storageUrl: env.MEDIAPLANE_STORAGE_URL || undefined,
    urlSigningSecret: env.MEDIAPLANE_URL_SIGNING_SECRET || undefined,
    drmMasterKey: drmMasterKey(env.MEDIAPLANE_DRM_MASTER_KEY),
    uploadPartSize: int('MEDIAPLANE_UPLOAD_PART_SIZE', env.MEDIAPLANE_UPLOAD_PART_SIZE, 0) || undefined,
    uploadTtlHours: positiveNumber('MEDIAPLANE_UPLOAD_TTL_HOURS', env.MEDIAPLANE_UPLOAD_TTL_HOURS, 24),
    uploadUrlTtlSeconds: int('MEDIAPLANE_UPLOAD_URL_TTL_SECONDS', env.MEDIAPLANE_UPLOAD_URL_TTL_SECONDS, 6 * 3600),
    uploadIdleTimeoutSeconds: positiveNumber('MEDIAPLANE_UPLOAD_IDLE_TIMEOUT_SECONDS', env.MEDIAPLANE_UPLOAD_IDLE_TIMEOUT_SECONDS, 60),
    previewTtlSeconds: int('MEDIAPLANE_PREVIEW_TTL_SECONDS', env.MEDIAPLANE_PREVIEW_TTL_SECONDS, 3600),
    eventRetentionDays: int('MEDIAPLANE_EVENT_RETENTION_DAYS', env.MEDIAPLANE_EVENT_RETENTION_DAYS, 30),
    fetchAllowPrivate: bool('MEDIAPLANE_FETCH_ALLOW_PRIVATE', env.MEDIAPLANE_FETCH_ALLOW_PRIVATE, false),
    importMaxBytes: positive('MEDIAPLANE_IMPORT_MAX_BYTES', env.MEDIAPLANE_IMPORT_MAX_BYTES, 30 * 1024 ** 3),
    listCacheBytes: int('MEDIAPLANE_LIST_CACHE_MB', env.MEDIAPLANE_LIST_CACHE_MB, 64) * 1024 * 1024,
    rateLimitPerMinute: int('MEDIAPLANE_RATE_LIMIT_PER_MINUTE', env.MEDIAPLANE_RATE_LIMIT_PER_MINUTE, 60_000),
    beaconRateLimitPerMinute: int('MEDIAPLANE_BEACON_RATE_LIMIT_PER_MINUTE', env.MEDIAPLANE_BEACON_RATE_LIMIT_PER_MINUTE, 30_000),
    bodyLimitBytes: positive('MEDIAPLANE_BODY_LIMIT_KB', env.MEDIAPLANE_BODY_LIMIT_KB, 1024) * 1024,
    bodyDrainMs: positiveNumber('MEDIAPLANE_BODY_DRAIN_SECONDS', env.MEDIAPLANE_BODY_DRAIN_SECONDS, 10) * 1000,
    responseCheck: bool('MEDIAPLANE_RESPONSE_CHECK', env.MEDIAPLANE_RESPONSE_CHECK, false),
    shutdownTimeoutSeconds: positive('MEDIAPLANE_SHUTDOWN_TIMEOUT_SECONDS', env.MEDIAPLANE_SHUTDOWN_TIMEOUT_SECONDS, 30),
    webhooks: {
      timeoutMs: positive('MEDIAPLANE_WEBHOOK_TIMEOUT_MS', env.MEDIAPLANE_WEBHOOK_TIMEOUT_MS, 5000),
      retryPeriodSeconds: positive('MEDIAPLANE_WEBHOOK_RETRY_PERIOD_SECONDS', env.MEDIAPLANE_WEBHOOK_RETRY_PERIOD_SECONDS, 86400),
      retryBaseMs: positive('MEDIAPLANE_WEBHOOK_RETRY_BASE_MS', env.MEDIAPLANE_WEBHOOK_RETRY_BASE_MS, 10_000),
      retryMaxDelayMs: positive('MEDIAPLANE_WEBHOOK_RETRY_MAX_DELAY_MS', env.MEDIAPLANE_WEBHOOK_RETRY_MAX_DELAY_MS, 3_600_000),
      allowPrivate: bool('MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE', env.MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE, false),
      concurrency: positive('MEDIAPLANE_WEBHOOK_CONCURRENCY', env.MEDIAPLANE_WEBHOOK_CONCURRENCY, 64),
      pollMs: positive('MEDIAPLANE_WEBHOOK_POLL_MS', env.MEDIAPLANE_WEBHOOK_POLL_MS, 500),
    },
    live: {
      rtmpHost: env.MEDIAPLANE_RTMP_HOST || '0.0.0.0',
      rtmpPort: port('MEDIAPLANE_RTMP_PORT', env.MEDIAPLANE_RTMP_PORT, 1935),
      rtmpPublicUrl: rtmpUrl(env.MEDIAPLANE_RTMP_PUBLIC_URL),
      srtHost: env.MEDIAPLANE_SRT_HOST || '0.0.0.0',
      srtPortMin: port('MEDIAPLANE_SRT_PORT_MIN', env.MEDIAPLANE_SRT_PORT_MIN, 9000),
      srtPortMax: port('MEDIAPLANE_SRT_PORT_MAX', env.MEDIAPLANE_SRT_PORT_MAX, 9199),
      srtPublicHost: env.MEDIAPLANE_SRT_PUBLIC_HOST || undefined,
      leaseSeconds: positive('MEDIAPLANE_LIVE_LEASE_SECONDS', env.MEDIAPLANE_LIVE_LEASE_SECONDS, 10),
      pollMs: positive('MEDIAPLANE_LIVE_POLL_MS', env.MEDIAPLANE_LIVE_POLL_MS, 1000),
      maxChannels: positive('MEDIAPLANE_LIVE_MAX_CHANNELS', env.MEDIAPLANE_LIVE_MAX_CHANNELS, 16),
      activeStandby: bool('MEDIAPLANE_LIVE_ACTIVE_STANDBY', env.MEDIAPLANE_LIVE_ACTIVE_STANDBY, false),
      restreamAllowPrivate: bool('MEDIAPLANE_RESTREAM_ALLOW_PRIVATE', env.MEDIAPLANE_RESTREAM_ALLOW_PRIVATE, false),
      segmentSeconds: positive('MEDIAPLANE_LIVE_SEGMENT_SECONDS', env.MEDIAPLANE_LIVE_SEGMENT_SECONDS, 2),
      windowSegments: positive('MEDIAPLANE_LIVE_WINDOW_SEGMENTS', env.MEDIAPLANE_LIVE_WINDOW_SEGMENTS, 30),
      partSeconds: positiveNumber('MEDIAPLANE_LIVE_PART_SECONDS', env.MEDIAPLANE_LIVE_PART_SECONDS, 0.333),
      workDir: resolve(env.MEDIAPLANE_LIVE_WORK_DIR || resolve(dataDir, 'live-work')),
      eventLeadSeconds: int('MEDIAPLANE_LIVE_EVENT_LEAD_SECONDS', env.MEDIAPLANE_LIVE_EVENT_LEAD_SECONDS, 30),
      retentionSeconds: positive('MEDIAPLANE_LIVE_RETENTION_SECONDS', env.MEDIAPLANE_LIVE_RETENTION_SECONDS, 3600),
      autoRecordReconnectSeconds: positive('MEDIAPLANE_AUTORECORD_RECONNECT_SECONDS', env.MEDIAPLANE_AUTORECORD_RECONNECT_SECONDS, 60),
      watermarkRungs: positive('MEDIAPLANE_LIVE_WATERMARK_RUNGS', env.MEDIAPLANE_LIVE_WATERMARK_RUNGS, 2),
      captionModelsDir: resolve(env.MEDIAPLANE_CAPTION_MODELS_DIR || '/usr/share/pocketsphinx/model'),
    },
    ...overrides,
  };
}

/**
 * The tenant CLI's own settings (`mediaplane login`, `upload`, `assets` ...: src/cli/tenant/): where profiles are
 * kept, and the credentials and profile the environment gives, which override the stored profile's. Separate from
 * `loadConfig`: a tenant's commands never read (nor fail on) the server's settings.
 */
export interface TenantCliSettings {
  /** `$XDG_CONFIG_HOME/mediaplane`, else `~/.config/mediaplane`. */
  configDir: string;
  profile: string | undefined;
  url: string | undefined;
  tenantId: string | undefined;
  apiKey: string | undefined;
}

export function tenantCliSettings(env: NodeJS.ProcessEnv = process.env, home = homedir()): TenantCliSettings {
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(env.HOME || home, '.config');
  return {
    configDir: join(base, 'mediaplane'),
    profile: env.MEDIAPLANE_PROFILE || undefined,
    url: env.MEDIAPLANE_URL || undefined,
    tenantId: env.MEDIAPLANE_TENANT_ID || undefined,
    apiKey: env.MEDIAPLANE_API_KEY || undefined,
  };
}
