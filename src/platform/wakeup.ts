import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { PlatformContext } from '../context.ts';

/**
 * Calls `onNotify` whenever a transaction that recorded events commits (LISTEN on the events channel), with the
 * notification's payload ('' for events), or with none after a reconnection, when notifications may have been missed.
 * PostgreSQL: a dedicated connection, reopened when it drops (polling covers the gap). PGlite: its own listener.
 * Returns the function that stops listening.
 */
export async function listenForCommits(ctx: PlatformContext, channel: string, onNotify: (payload?: string) => void): Promise<() => Promise<void>> {
  if (ctx.database.kind === 'pglite') {
    const client = (ctx.db as unknown as { $client: PGlite }).$client;
    const unlisten = await client.listen(channel, (payload) => onNotify(payload));
    return () => unlisten();
  }
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = new pg.Client({ connectionString: ctx.config.databaseUrl });
    c.on('notification', (message) => onNotify(message.payload ?? ''));
    c.on('error', () => reconnect(c));
    c.on('end', () => reconnect(c));
    try {
      await c.connect();
      await c.query(`listen ${channel}`);
      client = c;
      onNotify(); // events may have committed while no one listened
    } catch {
      reconnect(c);
    }
  };
  const reconnect = (c: pg.Client) => {
    c.removeAllListeners();
    c.on('error', () => {});
    void c.end().catch(() => {});
    if (client === c) client = undefined;
    if (!stopped && !retry) retry = setTimeout(() => ((retry = undefined), void connect()), 1000);
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const c = client;
    client = undefined;
    if (c) {
      c.removeAllListeners();
      c.on('error', () => {});
      await c.end().catch(() => {});
    }
  };
}
