import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';

/**
 * The baselines: a bare Fastify route answering a constant JSON body (read from the file given), no auth, no database.
 * With a database URL as the second argument, the bound instead: the same route after the one thing every
 * authenticated request must do by design (docs/decisions/platform.md: a deleted key stops working with the next
 * request), the principal lookup of `X-Api-Key` by its hash, one named statement on a pool of the platform's size.
 */
const routes = JSON.parse(readFileSync(process.argv[2], 'utf8')) as Record<string, unknown>;
const databaseUrl = process.argv[3];
const pool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: 10, application_name: 'mediaplane-bench-bound' }) : undefined;
const PRINCIPAL = `select t.id, t.name, t.status, k.role_type, v.version from api_keys k
  join tenants t on t.id = k.tenant_id
  left join collection_versions v on v.tenant_id = t.id and v.collection = $2
  where k.key_hash = $1`;

const app = Fastify();
for (const [path, body] of Object.entries(routes))
  app.get(path, async (request, reply) => {
    if (!pool) return body;
    const key = String(request.headers['x-api-key'] ?? '');
    const hash = createHash('sha256').update(key).digest('hex');
    const { rows } = await pool.query({ name: 'principal', text: PRINCIPAL, values: [hash, 'core.api-keys'] });
    if (rows.length === 0) return reply.code(401).send({ error: 'unknown key' });
    return body;
  });
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(address);
