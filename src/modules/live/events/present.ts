import type { PlatformContext } from '../../../context.ts';
import type { EventRow, EventStatus } from './tables.ts';

/** The Event of the spec, with `distribution` (get, patch, and list items: responses may grow). */
export async function presentEvent(_ctx: PlatformContext, e: EventRow & { status: EventStatus }) {
  return {
    id: e.id,
    channelId: e.channelId,
    start: e.start,
    end: e.end,
    title: e.title,
    ensureChannel: e.ensureChannel,
    catchup: { endpoints: [] as Record<string, unknown>[] },
    metadata: e.metadata,
    tags: e.tags,
    attributes: e.attributes,
    createDate: e.createDate,
    lastModificationDate: e.lastModificationDate,
    status: e.status,
    distribution: { accessPolicyId: e.accessPolicyId, accessPolicyName: null },
  };
}
