import { eq, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client.ts';
import { EVENTS_CHANNEL, SECRETS_CHANGED } from '../../platform/events.ts';
import { newSigningSecret, type SigningSecrets } from './signing.ts';
import { webhookSecrets } from './tables.ts';

/** How long a rotated-out secret keeps signing deliveries, unless the rotation says otherwise. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
export const MAX_OVERLAP_SECONDS = 30 * 24 * 3600;

/** Creates the tenant's secret on first use (by whoever asks first: the API or the dispatcher). */
async function ensureSecret(db: Queryable, tenantId: string): Promise<void> {
  await db.insert(webhookSecrets).values({ tenantId, secret: newSigningSecret() }).onConflictDoNothing();
}

/** The tenant's signing secret, and the one it replaced while that still signs (the overlap window of a rotation). */
export async function signingSecrets(db: Queryable, tenantId: string): Promise<SigningSecrets> {
  await ensureSecret(db, tenantId);
  const [row] = await db
    .select({
      current: webhookSecrets.secret,
      previous: sql<string | null>`case when ${webhookSecrets.previousSecretExpirationDate} > now() then ${webhookSecrets.previousSecret} end`,
      previousExpiresAt: webhookSecrets.previousSecretExpirationDate,
    })
    .from(webhookSecrets)
    .where(eq(webhookSecrets.tenantId, tenantId));
  return row.previous && row.previousExpiresAt
    ? { current: row.current, previous: row.previous, previousExpiresAt: new Date(row.previousExpiresAt) }
    : { current: row.current };
}

/** The tenant's signing secret (the spec's Get webhook signature secret). */
export const signingSecret = async (db: Queryable, tenantId: string): Promise<string> => (await signingSecrets(db, tenantId)).current;

/**
 * Replaces the tenant's signing secret. For `overlapSeconds` the old one keeps signing too: every delivery carries a
 * Standard Webhooks signature with each, so receivers can switch secrets at their own pace. A rotation within the
 * window of another ends the older window at once (two secrets sign at most). Dispatchers drop their cached secrets
 * when it commits.
 */
export async function rotateSigningSecret(db: Db, tenantId: string, overlapSeconds: number) {
  return db.transaction(async (tx) => {
    await ensureSecret(tx, tenantId);
    const overlap = overlapSeconds > 0;
    const [row] = await tx
      .update(webhookSecrets)
      .set({
        secret: newSigningSecret(),
        previousSecret: overlap ? sql`${webhookSecrets.secret}` : null,
        previousSecretExpirationDate: overlap ? sql`now() + ${overlapSeconds} * interval '1 second'` : null,
      })
      .where(eq(webhookSecrets.tenantId, tenantId))
      .returning({ secret: webhookSecrets.secret, previousSecretExpirationDate: webhookSecrets.previousSecretExpirationDate });
    await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${SECRETS_CHANGED})`);
    return { secret: row.secret, previousSecretExpirationDate: row.previousSecretExpirationDate?.toISOString() ?? null };
  });
}
