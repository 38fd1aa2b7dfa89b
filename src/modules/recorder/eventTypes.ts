/** The events the Recorder records: every state change of a recording, its archive and its outputs. */
export const RECORDER_EVENT_TYPES = [
  'recorder.recording.created',
  'recorder.recording.updated',
  'recorder.recording.live',
  'recorder.recording.processing',
  'recorder.recording.available',
  'recorder.recording.failed',
  'recorder.recording.deleted',
  'recorder.recording.expired',
  'recorder.catchup.expired',
  'recorder.archive.processing',
  'recorder.archive.available',
  'recorder.archive.failed',
  'recorder.archive.deleted',
  'recorder.output.created',
  'recorder.output.processing',
  'recorder.output.available',
  'recorder.output.failed',
  'recorder.output.deleted',
] as const;

export type RecorderEventType = (typeof RECORDER_EVENT_TYPES)[number];

declare module '../../platform/events.ts' {
  interface EventTypes {
    recorder: RecorderEventType;
  }
}
