import type { FastifyInstance } from 'fastify';
import { v7 } from 'uuid';

/** Time-ordered UUIDs keep primary-key indexes append-only. */
export const newId = (): string => v7();

/** The plain 8-4-4-4-12 hex form: the one PostgreSQL's uuid type and every id we issue share (no `urn:uuid:`, no braces). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s);

/** The parts of a JSON schema that lead to `format: 'uuid'` strings. */
interface SchemaNode {
  format?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}

/**
 * Every value the schema declares a uuid, in its stored lowercase spelling. PostgreSQL's uuid type matches any case,
 * but ids are also compared, echoed and made into storage keys in our code: an asset deleted by its upper-case id
 * used to leave its outputs on disk. Driven by the schema, not the value, so that a user's own string that merely
 * looks like a UUID (a title, an event id) is left as given.
 */
function lowercaseUuids(schema: SchemaNode | undefined, value: unknown): unknown {
  if (!schema || value === null || value === undefined) return value;
  if (schema.format === 'uuid' && typeof value === 'string') return value.toLowerCase();
  for (const branch of schema.anyOf ?? schema.oneOf ?? []) value = lowercaseUuids(branch, value);
  if (Array.isArray(value) && schema.items) {
    for (let i = 0; i < value.length; i++) value[i] = lowercaseUuids(schema.items, value[i]);
  } else if (typeof value === 'object' && schema.properties) {
    const object = value as Record<string, unknown>;
    for (const [key, property] of Object.entries(schema.properties)) if (key in object) object[key] = lowercaseUuids(property, object[key]);
  }
  return value;
}

/** After validation (ids are known to be UUIDs, query arrays coerced), each route's declared ids are lowercased. */
export function registerIdSpelling(app: FastifyInstance): void {
  // A callback hook: every request runs it, and it awaits nothing.
  app.addHook('preHandler', (request, _reply, done) => {
    const schema = request.routeOptions.schema as { params?: SchemaNode; querystring?: SchemaNode; body?: SchemaNode } | undefined;
    if (schema) {
      lowercaseUuids(schema.params, request.params);
      lowercaseUuids(schema.querystring, request.query);
      lowercaseUuids(schema.body, request.body);
    }
    done();
  });
}
