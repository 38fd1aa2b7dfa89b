/** The events the DRM module records: policies and settings (keys and licenses are too many; the license log has them). */
export const DRM_EVENT_TYPES = ['drm.policy.created', 'drm.policy.updated', 'drm.policy.deleted', 'drm.settings.updated'] as const;

declare module '../../platform/events.ts' {
  interface EventTypes {
    drm: (typeof DRM_EVENT_TYPES)[number];
  }
}
