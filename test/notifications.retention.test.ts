import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordEvent } from '../src/platform/events.ts';
import { deleteExpiredEvents } from '../src/modules/notifications/retention.ts';
import { events } from '../src/db/events.ts';
import { webhookDeliveries, type DeliveryStatus } from '../src/modules/notifications/tables.ts';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';

/** Old events go, with their deliveries; an event that may still be delivered stays, however old. */
describeEachDb('Event retention', (kind) => {
  let p: TestPlatform;
  // API role only: no dispatcher to deliver (or sweep) behind the test's back.
  beforeAll(async () => (p = await startPlatform(kind, { MEDIAPLANE_ROLE: 'api' })));
  afterAll(() => p.stop());

  it('deletes delivered events older than the cutoff and keeps undispatched, retrying and recent ones', async () => {
    const t = await p.createTenant();
    const hook = await t.json('POST', '/notifications/v1/webhook', { name: 'h', url: 'https://hooks.example.com/x', eventTypes: ['core.apikey.created'] });
    expect(hook.status).toBe(200);
    const db = p.ctx.db;
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    const event = async (occuredAt: Date, dispatched: boolean, delivery?: DeliveryStatus) => {
      const id = await recordEvent(db, t.id, 'core.apikey.created', { id: crypto.randomUUID() });
      await db.update(events).set({ occuredAt, dispatched }).where(eq(events.id, id));
      if (delivery) await db.insert(webhookDeliveries).values({ tenantId: t.id, webhookId: hook.body.id, eventId: id, status: delivery });
      return id;
    };
    const delivered = await event(longAgo, true, 'Delivered');
    const failedForGood = await event(longAgo, true, 'Failed');
    const noSubscriber = await event(longAgo, true);
    const retrying = await event(longAgo, true, 'Retrying');
    const pending = await event(longAgo, true, 'Pending');
    const undispatched = await event(longAgo, false);
    const recent = await event(new Date(), true, 'Delivered');

    expect(await deleteExpiredEvents(db, new Date(Date.now() - 30 * 86_400_000))).toBe(3);
    const all = [delivered, failedForGood, noSubscriber, retrying, pending, undispatched, recent];
    const left = (await db.select({ id: events.id }).from(events).where(inArray(events.id, all))).map((r) => r.id);
    expect(left.sort()).toEqual([retrying, pending, undispatched, recent].sort());
    const deliveries = (await db.select({ eventId: webhookDeliveries.eventId }).from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, all))).map(
      (r) => r.eventId,
    );
    expect(deliveries.sort()).toEqual([retrying, pending, recent].sort());
    expect(await deleteExpiredEvents(db, new Date(Date.now() - 30 * 86_400_000))).toBe(0);
  });
});
