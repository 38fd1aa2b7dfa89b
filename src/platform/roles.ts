/** What a route needs: `read` (any role), `write` (content changes), `manage` (API keys, webhooks, settings). */
export type Access = 'read' | 'write' | 'manage';

export const ROLE_TYPES = ['Admin', 'Editor', 'Viewer'] as const;
export type RoleType = (typeof ROLE_TYPES)[number];

export interface Role {
  id: string;
  type: RoleType;
  name: string;
  grants: readonly Access[];
}

/** Roles are fixed data; their ids are stable so clients may store them. */
export const ROLES: Record<RoleType, Role> = {
  Admin: { id: '0190b0a0-0000-7000-8000-00000000a001', type: 'Admin', name: 'Admin', grants: ['read', 'write', 'manage'] },
  Editor: { id: '0190b0a0-0000-7000-8000-00000000a002', type: 'Editor', name: 'Editor', grants: ['read', 'write'] },
  Viewer: { id: '0190b0a0-0000-7000-8000-00000000a003', type: 'Viewer', name: 'Viewer', grants: ['read'] },
};

export const isRoleType = (s: string): s is RoleType => (ROLE_TYPES as readonly string[]).includes(s);
