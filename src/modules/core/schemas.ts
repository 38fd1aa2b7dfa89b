import { Type } from 'typebox';
import { Timestamp, Uuid } from '../../platform/schemas.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { ROLE_TYPES } from '../../platform/roles.ts';

const RoleType = Type.String({ minLength: 1, description: `one of ${ROLE_TYPES.join(', ')}` });
const Name = Type.String({ minLength: 1, maxLength: 256 });

export const TenantStatusParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const TenantStatus = Type.Object({
  status: Type.String({ description: 'Active, Blocked, Deleted, SettingUp or Error' }),
  message: Type.String(),
});

export const OwnTenant = Type.Object({
  id: Type.String(),
  name: Type.String({ description: "The tenant's name, the host of its own base URL" }),
  status: Type.String({ description: 'Active, Blocked, Deleted, SettingUp or Error' }),
  message: Type.String(),
  roleType: Type.String({ description: `The calling key's role: one of ${ROLE_TYPES.join(', ')}` }),
  grants: Type.Array(Type.String(), { description: 'What the calling key may do: `read`, `write` (content), `manage` (keys, webhooks, settings)' }),
});

export const ApiKeyParams = Type.Object({ id: Uuid });
export const ApiKeyListQuery = Type.Object({ ...PagingQuery });
const ApiKeyListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  roleName: Type.String(),
  roleId: Type.String(),
  roleType: Type.String(),
  createdAt: Timestamp,
});
export const ApiKeyList = Paged(ApiKeyListItem);
export const ApiKeySingle = Type.Object({ id: Type.String(), name: Type.String(), roleId: Type.String(), roleName: Type.String(), roleType: Type.String() });

export const ApiKeyWrite = Type.Object({ name: Name, roleType: RoleType });
export const ApiKeyWritten = Type.Object({ id: Type.String(), name: Type.String(), roleType: Type.String() });
export const ApiKeyCreated = Type.Object({
  id: Type.String(),
  name: Type.String(),
  roleType: Type.String(),
  key: Type.String({ description: 'The secret; shown only in this response' }),
});
