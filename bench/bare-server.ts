import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/** The baseline: a bare Fastify route answering a constant JSON body (read from the file given), no auth, no database. */
const routes = JSON.parse(readFileSync(process.argv[2], 'utf8')) as Record<string, unknown>;
const app = Fastify();
for (const [path, body] of Object.entries(routes)) app.get(path, async () => body);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(address);
