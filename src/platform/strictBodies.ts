/**
 * Strict request bodies, by construction: every object in a JSON body schema refuses properties it does not name
 * (`additionalProperties: false`), unless the schema says otherwise (a map such as `metadata`, which sets
 * `additionalProperties` or `patternProperties` itself). A typo (`latencyy`) or a property the operation cannot change
 * (`latency` on a channel's PATCH) must not pass as a 200 that did nothing (docs/decisions/platform.md). Query strings
 * and paths stay lenient: caches and analytics add parameters there.
 *
 * A property of the resource that the operation cannot change is named on its object schema with
 * `fixedProperties` (see `fixedAfterCreation`), so that the answer says so rather than "is not allowed here".
 */

/** The keyword naming, on a body's object schema, properties that exist on the resource but cannot be changed. */
export const FIXED_PROPERTIES = 'fixedProperties';

/** Options for `Type.Object`: these properties of the resource are refused as fixed at creation. */
export const fixedAfterCreation = (...names: string[]) => ({ [FIXED_PROPERTIES]: names });

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A copy of a body schema with every object made strict. `forValidation`: fixed properties are added as allowed
 * names (the `fixedProperties` keyword refuses them with its own message, instead of `additionalProperties` too);
 * otherwise (the OpenAPI document) the keyword becomes a sentence of the object's description.
 */
export function strictBodySchema(schema: unknown, forValidation: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => strictBodySchema(s, forValidation));
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions') {
      out[key] = isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictBodySchema(v, forValidation)])) : value;
    } else if (['items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'not', 'additionalProperties', 'if', 'then', 'else'].includes(key)) {
      out[key] = strictBodySchema(value, forValidation);
    } else {
      out[key] = value;
    }
  }
  const isObjectSchema = out.type === 'object' || (out.type === undefined && isObject(out.properties));
  if (isObjectSchema && out.additionalProperties === undefined && out.patternProperties === undefined) out.additionalProperties = false;
  const fixed = out[FIXED_PROPERTIES];
  if (Array.isArray(fixed)) {
    if (forValidation) {
      const properties = { ...(isObject(out.properties) ? out.properties : {}) };
      for (const name of fixed as string[]) properties[name] ??= {};
      out.properties = properties;
    } else {
      delete out[FIXED_PROPERTIES];
      const sentence = `${(fixed as string[]).map((n) => `\`${n}\``).join(', ')} cannot be changed after creation (400 validation_failed).`;
      out.description = typeof out.description === 'string' ? `${out.description} ${sentence}` : sentence;
    }
  }
  return out;
}

interface DataContext {
  instancePath: string;
}
interface KeywordRegistry {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Ajv's KeywordDefinition, without depending on ajv (Fastify's)
  addKeyword(definition: any): unknown;
}
type FixedValidate = ((names: string[], data: unknown, parent: unknown, cxt: DataContext) => boolean) & { errors?: object[] };

/** An Ajv plugin: the `fixedProperties` keyword, one error per fixed property present in the value. */
export function fixedPropertiesKeyword<A extends KeywordRegistry>(ajv: A): A {
  const validate: FixedValidate = (names, data, _parent, cxt) => {
    if (!isObject(data)) return true;
    const present = names.filter((n) => Object.hasOwn(data, n));
    validate.errors = present.map((property) => ({
      keyword: FIXED_PROPERTIES,
      instancePath: `${cxt.instancePath}/${property.replace(/~/g, '~0').replace(/\//g, '~1')}`,
      params: { property },
      message: 'cannot be changed after creation',
    }));
    return present.length === 0;
  };
  ajv.addKeyword({ keyword: FIXED_PROPERTIES, type: 'object', schemaType: 'array', errors: true, validate });
  return ajv;
}
