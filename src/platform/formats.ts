import { isStorableDateTime } from './dates.ts';
import { UUID_PATTERN } from './ids.ts';

/** What `platformFormats` needs of the Ajv instance Fastify builds (ajv is Fastify's dependency, not ours). */
interface FormatRegistry {
  addFormat(name: string, format: RegExp | { type: 'string'; validate: (value: string) => boolean }): unknown;
}

/**
 * An Ajv plugin, given after ajv-formats, that narrows two of its formats to what the database takes, so that every
 * schema using them refuses such input with a 400 naming the field instead of failing in a query:
 * - `uuid`: ajv-formats also accepts `urn:uuid:<uuid>`, which PostgreSQL's uuid type refuses;
 * - `date-time`: ajv-formats accepts leap seconds (`23:59:60`, an Invalid Date in JavaScript) and years PostgreSQL
 *   cannot hold (`0000`, or `9999-12-31T23:59:59-14:00`, which is in year 10000 once in UTC).
 */
export function platformFormats<A extends FormatRegistry>(ajv: A): A {
  ajv.addFormat('uuid', UUID_PATTERN);
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  return ajv;
}
