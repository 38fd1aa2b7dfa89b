import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';

/** Legacy OAuth client-credentials clients, created by the operator per tenant. */
export const oauthClients = pgTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  tenantId: uuid('tenant_id')
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  secretHash: text('secret_hash').notNull(),
  roleType: text('role_type').notNull(),
  createDate: createdAt(),
});

export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.clientId, { onDelete: 'cascade' }),
    expiresAt: dateTime('expires_at').notNull(),
  },
  (t) => [index('oauth_tokens_expires_at').on(t.expiresAt)],
);
