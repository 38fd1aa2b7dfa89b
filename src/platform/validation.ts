import { AjvCompiler } from '@fastify/ajv-compiler';
import addFormats from 'ajv-formats';
import type { FastifyServerOptions } from 'fastify';
import { platformFormats } from './formats.ts';
import { lazily } from './lazyCompile.ts';
import { fixedPropertiesKeyword, strictBodySchema } from './strictBodies.ts';

/**
 * One rule for every operation: coercion only where HTTP gives strings. A query string and a path carry text, so
 * `?limit=10`, `?desc=true` and `?ids=a` (one value for an array) are read as the schema's types; a JSON body carries
 * its own types, so `"tags": "a,b"`, `"isEnabled": null` or `"name": 12345` is a 400 naming the field rather than
 * being turned into `["a,b"]`, `false` or `"12345"`. Unknown properties of a JSON body are refused, never removed
 * (strictBodies.ts); a query string's are ignored.
 */
const COMMON = { removeAdditional: false, allErrors: true } as const;
const FROM_TEXT = { ...COMMON, coerceTypes: 'array' } as const;
const FROM_JSON = { ...COMMON, coerceTypes: false } as const;

// platformFormats narrows ajv-formats' uuid and date-time to what PostgreSQL stores; it must come after.
const plugins = [addFormats as never, platformFormats, fixedPropertiesKeyword];

/** Fastify's `ajv` option: the settings of the coercing instance (query string, path, headers). */
export const ajvOptions = { customOptions: FROM_TEXT, plugins } satisfies FastifyServerOptions['ajv'];

interface RouteSchema {
  schema: unknown;
  httpPart?: string;
}
type Compile = (route: RouteSchema) => unknown;
type Factory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;

/**
 * Fastify's `schemaController.compilersFactory.buildValidator`: Fastify's own Ajv compiler, twice, with the shared
 * schemas (`app.addSchema`) in both: one that coerces for the parts of a request that are text, one that does not for
 * the body, which it also makes strict (every object refuses properties it does not name).
 */
export const buildValidator = ((externalSchemas: Record<string, unknown>, ajvServerOptions?: { customOptions?: object; plugins?: unknown[] }) => {
  // Typed for a schema argument, Fastify's pool in fact compiles a route's `{ schema, httpPart, ... }`.
  const pool = AjvCompiler() as unknown as (schemas: Record<string, unknown>, options: object) => Compile;
  const options = ajvServerOptions ?? {};
  // Each Ajv compiles its meta-schema and the shared schemas when made: made, as each route's validator is compiled,
  // on first use (lazyCompile.ts).
  let fromText: Compile | undefined;
  let fromJson: Compile | undefined;
  const compile = (route: RouteSchema) => {
    if (route.httpPart !== 'body')
      return (fromText ??= pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, ...FROM_TEXT } }))(route);
    fromJson ??= pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, ...FROM_JSON } });
    return fromJson({ ...route, schema: strictBodySchema(route.schema, true) });
  };
  return (route: RouteSchema) => lazily(() => compile(route) as (data: unknown) => unknown);
}) as unknown as Factory;
