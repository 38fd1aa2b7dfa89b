import { pino, type Logger as PinoLogger } from 'pino';

/** Structured logs for workers and jobs (`ctx.log`); the HTTP side logs through Fastify's own logger. */
export type Logger = PinoLogger;

export const createLogger = (level: string): Logger => pino({ level, base: { pid: process.pid } });
