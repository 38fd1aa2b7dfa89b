import { pino, type LoggerOptions, type Logger as PinoLogger } from 'pino';

/**
 * Structured logs (`ctx.log`). Fastify's request logs are children of the same logger, so a line of a job or a
 * webhook delivery carries the `requestId` of the request that caused it (platform/requestContext.ts).
 */
export type Logger = PinoLogger;

const createLogger = (level: string): Logger => pino({ level, base: { pid: process.pid } });

/** What `openPlatform` takes as `logger`: requests unlogged (default), logged, pino options, or a logger made elsewhere (tests). */
export type LoggerSetting = boolean | LoggerOptions | Logger | undefined;

const isLogger = (v: unknown): v is Logger => typeof (v as Logger)?.child === 'function' && typeof (v as Logger)?.info === 'function';

/**
 * The platform's logger at `level` (or the one given), and whether Fastify logs requests through it: off by default
 * (tests, benchmarks), which keeps requests free of a per-request child logger.
 */
export function platformLogger(setting: LoggerSetting, level: string): { log: Logger; http: boolean } {
  if (isLogger(setting)) return { log: setting, http: true };
  const given = typeof setting === 'object' ? setting.level : undefined;
  return { log: createLogger(given ?? level), http: !!setting };
}
