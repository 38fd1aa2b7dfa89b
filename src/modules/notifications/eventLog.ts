import { and, count, eq, gte, inArray, lte } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { storableDate } from '../../platform/dates.ts';
import { validationError } from '../../platform/errors.ts';
import { arrayParam, textSearch } from '../../platform/filters.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { eventPayload } from './signing.ts';
import { events } from '../../db/events.ts';
import { DELIVERY_STATUSES, webhookDeliveries, type DeliveryStatus } from './tables.ts';

export interface EventLogQuery extends PageRequest {
  start?: string;
  end?: string;
  statuses?: string[] | string;
  webhookId?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** JavaScript reads `2020-02-30` as 1 March: the day must exist in its month. */
function realDay(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate();
}

function date(field: string, value: string | undefined): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const d = DATE.test(value) && realDay(value) ? storableDate(value) : undefined;
  if (!d) throw validationError(field, 'must be an ISO 8601 date or date-time');
  return d;
}

function statuses(value: string[] | string | undefined): DeliveryStatus[] {
  return arrayParam(value).map((s) => {
    const status = DELIVERY_STATUSES.find((k) => k.toLowerCase() === s.toLowerCase());
    if (!status) throw validationError('statuses', `unknown status "${s}"; allowed: ${DELIVERY_STATUSES.join(', ')}`);
    return status;
  });
}

const SORTS = {
  OccuredAt: events.occuredAt,
  CreateDate: events.occuredAt,
  LastSendAttempt: webhookDeliveries.lastSendAttempt,
  Type: events.type,
  Status: webhookDeliveries.status,
};

/** The event log: one item per event and webhook it was (or is to be) delivered to, with every attempt. */
export async function listWebhookEvents(db: Queryable, tenantId: string, q: EventLogQuery) {
  const start = date('start', q.start);
  const end = date('end', q.end);
  const wanted = statuses(q.statuses);
  const where = and(
    eq(webhookDeliveries.tenantId, tenantId),
    start ? gte(events.occuredAt, start) : undefined,
    end ? lte(events.occuredAt, end) : undefined,
    wanted.length ? inArray(webhookDeliveries.status, wanted) : undefined,
    q.webhookId ? eq(webhookDeliveries.webhookId, q.webhookId) : undefined,
    textSearch(q.query, events.type),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select({ d: webhookDeliveries, e: events })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'OccuredAt', webhookDeliveries.seq))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(webhookDeliveries).innerJoin(events, eq(events.id, webhookDeliveries.eventId)).where(where),
  ]);
  const items = rows.map(({ d, e }) => ({
    id: e.id,
    webhookId: d.webhookId,
    lastSendAttempt: d.lastSendAttempt?.toISOString() ?? null,
    type: e.type,
    status: d.status,
    payload: eventPayload(e),
    sendAttempts: d.sendAttempts,
    occuredAt: e.occuredAt,
  }));
  return envelope(items, total, q);
}
