import { Type } from 'typebox';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { DateTime, Timestamp, Uuid } from '../../platform/schemas.ts';
import { LICENSE_TYPES } from './policies.ts';

const Seconds = (description: string) => Type.Integer({ minimum: 1, maximum: 10 * 365 * 86400, description });
const OptionalSeconds = (description: string) => Type.Union([Seconds(description), Type.Null()]);
const LicenseTypeSchema = Type.Union([Type.Literal(LICENSE_TYPES[0]), Type.Literal(LICENSE_TYPES[1])], {
  description: '`Aes128`: the HLS AES-128 key; `ClearKey`: the DASH ClearKey license',
});

export const PolicyParams = Type.Object({ id: Uuid });

const PolicyFields = {
  name: Type.String({ minLength: 1, maxLength: 256 }),
  licenseDurationSeconds: Seconds('how long a license (and the token that obtains it) is valid; also the window concurrent streams are counted in'),
  rentalWindowSeconds: OptionalSeconds("from the viewer's first license of a content: after it, no more licenses for it; null: no window"),
  playbackDurationSeconds: OptionalSeconds("from a token's first license: after it, the token gets no more; null: no limit"),
  persistent: Type.Boolean({ description: 'whether persistent (offline) licenses may be issued' }),
  allowedOutputs: Type.Array(LicenseTypeSchema, { maxItems: 2, description: 'the license types this policy grants' }),
  concurrentStreams: Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], {
    description: 'tokens of one userId holding a license at once; null: no limit (tokens without userId are not counted)',
  }),
};

export const PolicyCreate = Type.Object({
  templateId: Type.Optional(Type.String({ maxLength: 64, description: 'start from a template (GET /drm/v1/policies/templates)' })),
  name: Type.Optional(PolicyFields.name),
  licenseDurationSeconds: Type.Optional(PolicyFields.licenseDurationSeconds),
  rentalWindowSeconds: Type.Optional(PolicyFields.rentalWindowSeconds),
  playbackDurationSeconds: Type.Optional(PolicyFields.playbackDurationSeconds),
  persistent: Type.Optional(PolicyFields.persistent),
  allowedOutputs: Type.Optional(PolicyFields.allowedOutputs),
  concurrentStreams: Type.Optional(PolicyFields.concurrentStreams),
});

export const PolicyUpdate = Type.Object({
  name: Type.Optional(PolicyFields.name),
  licenseDurationSeconds: Type.Optional(PolicyFields.licenseDurationSeconds),
  rentalWindowSeconds: Type.Optional(PolicyFields.rentalWindowSeconds),
  playbackDurationSeconds: Type.Optional(PolicyFields.playbackDurationSeconds),
  persistent: Type.Optional(PolicyFields.persistent),
  allowedOutputs: Type.Optional(PolicyFields.allowedOutputs),
  concurrentStreams: Type.Optional(PolicyFields.concurrentStreams),
});

export const Policy = Type.Object({ id: Uuid, ...PolicyFields, createDate: Timestamp, lastModificationDate: Timestamp });
export const PolicyList = Paged(Policy);
export const PolicyListQuery = Type.Object({ limit: PagingQuery.limit, page: PagingQuery.page });

export const PolicyTemplate = Type.Object({ id: Type.String(), description: Type.String(), ...PolicyFields });
export const PolicyTemplateList = Paged(PolicyTemplate);

export const Settings = Type.Object({
  defaultPolicyId: Type.Union([Uuid, Type.Null()]),
  tokenTtlSeconds: Type.Integer(),
  hasCertificate: Type.Boolean(),
  lastModificationDate: Type.Union([Timestamp, Type.Null()]),
});
export const SettingsUpdate = Type.Object({
  defaultPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'the policy of tokens that name none; null: the built-in one' })),
  tokenTtlSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, description: 'lifetime of DRM tokens that ask for none' })),
});

export const TokenRequest = Type.Object({
  assetId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'the asset: a VOD asset or a live channel (its id is its DRM content id), or a recording of a DRM channel (the channel is its content id)',
    }),
  ),
  contentId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'a DRM content id (SPEKE contentId); instead of assetId' })),
  policyId: Type.Optional(Uuid),
  userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'the viewer, for rental windows and concurrent streams' })),
  expiresInSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400 })),
});
export const TokenResponse = Type.Object({
  token: Type.String(),
  tokenId: Type.String(),
  contentId: Type.String(),
  policyId: Type.Union([Uuid, Type.Null()]),
  expirationDate: DateTime,
});

const DrmSystemNameSchema = Type.Union([Type.Literal('ClearKey'), Type.Literal('Widevine'), Type.Literal('PlayReady')]);
export const AneviaKeyRequest = Type.Object({
  contentId: Type.String({ minLength: 1, maxLength: 256 }),
  keyIds: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 64 })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  drmSystems: Type.Optional(Type.Array(DrmSystemNameSchema, { maxItems: 3 })),
  commonEncryptionScheme: Type.Optional(Type.Union([Type.Literal('cenc'), Type.Literal('cbcs')])),
});
export const AneviaKeyResponse = Type.Object({
  contentId: Type.String(),
  keys: Type.Array(
    Type.Object({
      keyId: Uuid,
      key: Type.String({ description: 'base64' }),
      keyHex: Type.String(),
      aes128KeyUrl: Type.String(),
      clearKeyLicenseUrl: Type.String(),
      drmSystems: Type.Array(
        Type.Object({
          systemId: Type.String(),
          name: Type.String(),
          pssh: Type.String(),
          contentProtectionData: Type.String(),
          hlsSignalingData: Type.String(),
        }),
      ),
    }),
  ),
});

export const CpixBody = Type.String({ description: 'a CPIX XML document (Content-Type: application/xml)' });
export const CpixAnswer = Type.String({ description: 'the CPIX XML document, keys filled' });

export const Certificate = Type.Object({
  certificate: Type.String(),
  subject: Type.String(),
  issuer: Type.String(),
  validFrom: DateTime,
  validTo: DateTime,
  fingerprint256: Type.String(),
});
export const CertificateUpdate = Type.Object({
  certificate: Type.Union([Type.String({ minLength: 1, maxLength: 65536 }), Type.Null()], { description: 'PEM; null removes it' }),
});

export const StatsQuery = Type.Object({
  from: Type.Optional(DateTime),
  to: Type.Optional(DateTime),
});
export const StatsPagedQuery = Type.Object({ from: Type.Optional(DateTime), to: Type.Optional(DateTime), limit: PagingQuery.limit, page: PagingQuery.page });
export const HistogramQuery = Type.Object({
  from: Type.Optional(DateTime),
  to: Type.Optional(DateTime),
  interval: Type.Optional(Type.Union([Type.Literal('Minute'), Type.Literal('Hour'), Type.Literal('Day')])),
});
const Range = { from: DateTime, to: DateTime };
export const ErrorCodes = Type.Object({
  ...Range,
  items: Type.Array(Type.Object({ errorCode: Type.String(), httpStatus: Type.Integer(), count: Type.Integer() })),
});
export const LicenseRequestList = Paged(
  Type.Object({
    id: Type.String(),
    time: Timestamp,
    type: Type.String(),
    contentId: Type.Union([Type.String(), Type.Null()]),
    keyIds: Type.Array(Type.String()),
    policyId: Type.Union([Uuid, Type.Null()]),
    userId: Type.Union([Type.String(), Type.Null()]),
    granted: Type.Boolean(),
    errorCode: Type.Union([Type.String(), Type.Null()]),
    httpStatus: Type.Integer(),
  }),
);
export const LicenseCount = Type.Object({ ...Range, count: Type.Integer(), byType: Type.Record(Type.String(), Type.Integer()) });
export const Histogram = Type.Object({
  ...Range,
  interval: Type.String(),
  items: Type.Array(Type.Object({ time: DateTime, requests: Type.Integer(), licenses: Type.Integer(), errors: Type.Integer() })),
});
export const Metrics = Type.Object({
  ...Range,
  licenseRequests: Type.Integer(),
  licenses: Type.Integer(),
  errors: Type.Integer(),
  errorRate: Type.Number(),
  uniqueUsers: Type.Integer(),
  uniqueContents: Type.Integer(),
  uniqueTokens: Type.Integer(),
});

export const ClearKeyRequest = Type.Object({
  kids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 64, description: 'key ids, base64url (W3C EME ClearKey)' }),
  type: Type.Optional(Type.String({ maxLength: 64, description: '`temporary` (default) or `persistent-license`' })),
});
export const ClearKeyLicense = Type.Object({
  keys: Type.Array(Type.Object({ kty: Type.Literal('oct'), kid: Type.String(), k: Type.String() })),
  type: Type.String(),
});
export const LicenseQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 4096, description: 'the DRM token, when no Authorization header can be sent' })),
});
export const KeyParams = Type.Object({ keyId: Type.String({ maxLength: 64 }) });
