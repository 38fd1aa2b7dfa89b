import type { Queryable } from './client.ts';

/**
 * Raw SQL on the connection behind a Drizzle handle (a transaction's own client inside a transaction), so that
 * libraries that bring their own SQL (pg-boss `send`) write in the same transaction as our rows.
 * Both node-postgres clients and PGlite transactions answer `query(text, params)` with `{ rows }`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg-boss's own executeSql type
export function executorOf(db: Queryable): { executeSql(text: string, values: unknown[]): Promise<{ rows: any[] }> } {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- drizzle keeps the client on a session it does not type
  const client = (db as any).session?.client;
  if (!client?.query) throw new Error('no SQL client behind this database handle');
  return { executeSql: (text, values) => client.query(text, values) };
}
