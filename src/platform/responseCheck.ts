import { AjvCompiler } from '@fastify/ajv-compiler';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import { platformFormats } from './formats.ts';

/**
 * The OpenAPI document says what the server answers, by construction: with `MEDIAPLANE_RESPONSE_CHECK` (set by the
 * test suite's platforms, test/helpers/platform.ts), every answer of a documented operation is checked against the
 * document before it is sent: its status must be one the operation documents, its Content-Type one documented for that
 * status (none when the document gives no body), and a JSON body must validate against the documented schema. A
 * mismatch replaces the answer with `500 response_contract_violation` naming it, so the test that caused it fails.
 *
 * Statuses any operation may answer, documented once in the document's description rather than on each operation:
 * the HTTP layer's refusals (413, 414, 415), the rate limit (429) and the server's own faults (500, 503, 507).
 */
export const ANY_OPERATION_STATUSES = [413, 414, 415, 429, 500, 503, 507];

interface DocumentedResponse {
  content?: Record<string, unknown>;
}
interface Operation {
  responses?: Record<string, DocumentedResponse>;
}
type Validate = ((data: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };
type Compile = (route: { schema: unknown }) => Validate;

const mimeOf = (value: unknown) =>
  String(value ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();

export function registerResponseCheck(app: FastifyInstance): void {
  let paths: Record<string, Record<string, Operation>> | undefined;
  let compile: Compile | undefined;
  const validators = new Map<unknown, Validate | null>();

  const validatorOf = (schema: unknown): Validate | null => {
    if (!validators.has(schema)) {
      compile ??= (AjvCompiler() as unknown as (s: Record<string, unknown>, o: object) => Compile)(app.getSchemas(), {
        customOptions: { allErrors: true, coerceTypes: false, strict: false },
        plugins: [addFormats, platformFormats],
      });
      let validate: Validate | null = null;
      try {
        validate = compile({ schema });
      } catch {
        // A schema Ajv cannot compile (none today) is checked for its status and content type only.
      }
      validators.set(schema, validate);
    }
    return validators.get(schema)!;
  };

  /** What is wrong with this answer, or undefined when the document describes it. */
  const mismatch = (request: FastifyRequest, reply: FastifyReply, payload: unknown): string | undefined => {
    const route = request.routeOptions;
    const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
    if (!route.url || !schema || schema.hide) return undefined;
    paths ??= (app.swagger() as { paths: Record<string, Record<string, Operation>> }).paths;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const method = request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
    const operation = paths[path]?.[method];
    if (!operation) return undefined;
    const status = reply.statusCode;
    if (ANY_OPERATION_STATUSES.includes(status)) return undefined;
    const responses = operation.responses ?? {};
    const documented = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!documented) return `status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`;
    const contentType = mimeOf(reply.getHeader('content-type'));
    const empty = payload === undefined || payload === null || payload === '' || (Buffer.isBuffer(payload) && payload.length === 0);
    const content = documented.content;
    if (!content || Object.keys(content).length === 0) {
      return empty || request.method === 'HEAD' ? undefined : `status ${status} is documented without a body, answered ${contentType || 'a body'}`;
    }
    if (empty && (status === 204 || status === 304 || request.method === 'HEAD')) return undefined;
    if (!(contentType in content)) return `status ${status} is documented as ${Object.keys(content).join(', ')}, answered ${contentType || 'no Content-Type'}`;
    if (contentType !== 'application/json' || typeof payload !== 'string' || request.method === 'HEAD') return undefined;
    const routeSchema = schema.response?.[status] ?? schema.response?.[`${String(status)[0]}xx`] ?? schema.response?.default;
    const jsonSchema = (routeSchema as { content?: Record<string, { schema: unknown }> } | undefined)?.content?.['application/json']?.schema ?? routeSchema;
    const validate = jsonSchema === undefined ? null : validatorOf(jsonSchema);
    if (!validate || validate(JSON.parse(payload))) return undefined;
    const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
    return `the ${status} body does not match its documented schema: ${problems.join('; ')}`;
  };

  app.addHook('onSend', async (request, reply, payload) => {
    const problem = mismatch(request, reply, payload);
    if (!problem) return payload;
    const message = `${request.method} ${request.routeOptions.url}: ${problem}`;
    request.log.error({ problem: message }, 'response does not match the OpenAPI document');
    reply.code(500).type('application/json; charset=utf-8');
    return JSON.stringify(new ApiError(500, 'response_contract_violation', message).body());
  });
}
