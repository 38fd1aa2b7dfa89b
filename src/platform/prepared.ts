import type { Queryable } from '../db/client.ts';

const byHandle = new WeakMap<Queryable, Map<string, unknown>>();

/**
 * A named prepared statement per query shape, built once per database handle: a hot operation then skips building
 * its SQL on every call, and PostgreSQL parses and plans it once per connection. Shapes must be finite (a sort key from
 * a whitelist, a filter present or not), never built from free input; the values go in as placeholders.
 */
export function prepared<T>(db: Queryable, name: string, build: (name: string) => T): T {
  let statements = byHandle.get(db);
  if (!statements) byHandle.set(db, (statements = new Map()));
  let statement = statements.get(name) as T | undefined;
  if (!statement) statements.set(name, (statement = build(name)));
  return statement;
}
