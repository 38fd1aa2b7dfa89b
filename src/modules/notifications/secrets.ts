import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { newSigningSecret } from './signing.ts';
import { webhookSecrets } from './tables.ts';

/** The tenant's signing secret, created on first use (by whoever asks first: the API or the dispatcher). */
export async function signingSecret(db: Queryable, tenantId: string): Promise<string> {
  const [created] = await db
    .insert(webhookSecrets)
    .values({ tenantId, secret: newSigningSecret() })
    .onConflictDoNothing()
    .returning({ secret: webhookSecrets.secret });
  if (created) return created.secret;
  const [row] = await db.select({ secret: webhookSecrets.secret }).from(webhookSecrets).where(eq(webhookSecrets.tenantId, tenantId));
  return row.secret;
}
