import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';

/**
 * Notified (`pg_notify`) on commit of a change a live process should act on now: a channel started or stopped, its
 * settings or stream key changed. Every live process listens (`platform/wakeup.ts`) and runs a pass at once, as the
 * Recorder and the webhook dispatcher do; its poll (`MEDIAPLANE_LIVE_POLL_MS`) covers a missed notification.
 */
export const LIVE_RUNNER_CHANNEL = 'mediaplane_live';

/** Wakes the live processes when the caller's transaction commits. */
export const wakeLiveRunners = (tx: Queryable) => tx.execute(sql`select pg_notify(${LIVE_RUNNER_CHANNEL}, '')`);
