import { Type, type TSchema } from 'typebox';

/** Field schemas shared by every module, named as the spec names them. */
export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
/** A date in a response: rows carry `Date`, serialized as ISO 8601 UTC (`Z`). */
export const Timestamp = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });
export const Metadata = Type.Record(Type.String(), Type.String(), { description: 'string to string' });
export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 100 });
const Attribute = Type.String({ pattern: '^[^=\\s][^=]*=.*$', maxLength: 1024, description: 'key=value' });
export const Attributes = Type.Array(Attribute, { maxItems: 100 });

export const ErrorBody = Type.Object(
  {
    status: Type.Object({ code: Type.String(), status: Type.Integer(), message: Type.String() }),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: 'Error', description: 'The one error shape; codes in docs/errors.md' },
);

export const IdResponse = Type.Object({ id: Type.String() });

/** EndpointInfo `protectionDetails` (spec part 1): the keys of an encrypted endpoint, the same shape in every module. */
export const ProtectionDetails = Type.Object({
  keyIds: Type.Array(Type.String(), { description: 'DRM key ids (with `AudioVideoKeys`: the video key, then the audio key)' }),
  contentId: Type.String({ description: "DRM content id (a live channel's and its recordings': the channel id)" }),
});

/**
 * A response that is not JSON (a PNG, a playlist, a page), documented with its media type: Fastify and the OpenAPI
 * document take `{ content: { <type>: { schema } } }` in place of a schema. Typed as a schema for `withErrors`.
 */
export const mediaResponse = (mediaType: string, schema: TSchema, description = mediaType): TSchema =>
  ({ description, content: { [mediaType]: { schema } } }) as unknown as TSchema;

/**
 * Error responses every authenticated operation can give, for the OpenAPI document; 409 (a conflict with the
 * resource's state or a limit) is listed for all of them too, as what most writes can meet.
 */
export function withErrors<R extends Record<number, TSchema>>(responses: R) {
  const ref = Type.Ref('Error');
  return { ...responses, 400: ref, 401: ref, 403: ref, 404: ref, 409: ref };
}

/**
 * A recording's `archive` and one of its `outputs[]` as they are asked for (spec part 1, "Create recording"): the
 * Recorder's own request shapes, shared with the live channel's `autoRecord`, which asks for them for every session.
 */
export const RecordingArchiveRequest = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  delaySeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 2592000, description: 'seconds between the end of the recording and the archive' })),
  public: Type.Optional(Type.Boolean()),
  expirationDate: Type.Optional(DateTime),
});
export const RecordingOutputRequest = Type.Object({
  preset: Type.String({ minLength: 1, maxLength: 128 }),
  expirationDate: Type.Optional(DateTime),
});
