import { Type } from 'typebox';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { Timestamp } from '../../platform/schemas.ts';
import { fixedAfterCreation } from '../../platform/strictBodies.ts';

export const TenantParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'tenant id or name' }) });
export const Tenant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.String(),
  channelsLimit: Type.Integer(),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
});
export const TenantCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: 63 }) });
export const TenantCreated = Type.Object({
  ...Tenant.properties,
  apiKey: Type.Object({ id: Type.String(), name: Type.String(), roleType: Type.String(), key: Type.String() }),
});
export const TenantPatch = Type.Object(
  {
    status: Type.Optional(Type.String({ description: 'Active, Blocked, Deleted, SettingUp or Error' })),
    statusMessage: Type.Optional(Type.String({ maxLength: 1024 })),
    channelsLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000 })),
  },
  // A tenant's name is its host: never renamed (docs/decisions/platform.md).
  fixedAfterCreation('name'),
);
export const TenantList = Paged(Tenant);
export const TenantListQuery = Type.Object({ ...PagingQuery });

export const OAuthClientCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256 }),
  roleType: Type.Optional(Type.String({ default: 'Admin' })),
});
export const OAuthClientCreated = Type.Object({
  clientId: Type.String(),
  clientSecret: Type.String(),
  name: Type.String(),
  roleType: Type.String(),
  tenantId: Type.String(),
});

export const TokenForm = Type.Object({
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
  grant_type: Type.Optional(Type.String()),
});
export const TokenResponse = Type.Object({
  access_token: Type.String(),
  scope: Type.String(),
  expires_in: Type.Integer(),
  token_type: Type.String(),
});
export const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.String() });
