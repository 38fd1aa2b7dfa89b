import type { PlatformContext } from '../../../context.ts';
import { rangeEndpoints, type RangeEndpoint } from '../timeline.ts';
import type { EventRow, EventStatus } from './tables.ts';

/**
 * An event's catch-up: once it has started, the range of its channel's timeline from `start` to `end` (start-over
 * while it is Live: the playlist grows up to now; after `end` it is complete and ends). The same address before and
 * after `end`. Empty before `start`, and once the channel's retention no longer holds any of the event's segments.
 */
export async function catchupEndpoints(ctx: PlatformContext, e: EventRow & { status: EventStatus }): Promise<RangeEndpoint[]> {
  if (e.status === 'Scheduled') return [];
  if (e.end.getTime() + ctx.config.live.retentionSeconds * 1000 < Date.now()) return [];
  return rangeEndpoints(ctx, e.tenantId, e.channelId, e.start, e.end);
}

/** The Event of the spec, with `distribution` (get, patch, and list items: responses may grow). */
export async function presentEvent(ctx: PlatformContext, e: EventRow & { status: EventStatus }) {
  return {
    id: e.id,
    channelId: e.channelId,
    start: e.start,
    end: e.end,
    title: e.title,
    ensureChannel: e.ensureChannel,
    catchup: { endpoints: await catchupEndpoints(ctx, e) },
    metadata: e.metadata,
    tags: e.tags,
    attributes: e.attributes,
    createDate: e.createDate,
    lastModificationDate: e.lastModificationDate,
    status: e.status,
    distribution: { accessPolicyId: e.accessPolicyId, accessPolicyName: null },
  };
}
