import type { ChannelRun } from '../channelRun.ts';
import type { LivePipelineEvent } from '../media.ts';
import type { Change } from '../runnerChanges.ts';
import { newSession } from '../sessions.ts';
import type { TimelineWriter } from '../timelineWriter.ts';

/** Where a channel's pipeline events go: the timeline, and the runner's next batch of changes. */
export interface PipelineEventSink {
  timeline: TimelineWriter;
  push(change: Change): void;
  /** Something happened that should be written without waiting for the next pass. */
  poke(): void;
}

/** A pipeline event of `run` as the runner records it: its segments on the timeline, its status changes as changes. */
export function onPipelineEvent(sink: PipelineEventSink, run: ChannelRun, e: LivePipelineEvent): void {
  // Every published segment is on the timeline, also the last ones of a run that is stopping.
  if (e.type === 'segment') sink.timeline.push(run.tenantId, run.id, e);
  if (e.type === 'segment' && e.live) sessionSegment(sink, run, e);
  if (run.stopping) return;
  switch (e.type) {
    case 'segment':
      if (run.producing) return;
      run.producing = true;
      if (run.status === 'Starting') {
        sink.push({ kind: 'on', run });
        sink.poke();
      }
      return;
    case 'input.connected':
    case 'input.lost':
      return setInputState(sink, run, e.type === 'input.connected');
    case 'encoder.failed':
      sink.push({
        kind: 'encoder',
        run,
        failed: true,
        message: e.message,
      });
      return sink.poke();
    case 'encoder.recovered':
      sink.push({ kind: 'encoder', run, failed: false });
      return sink.poke();
  }
}

/** An encoder connected to or lost by `run` (from its pipeline, or from the ingest): written once per change. */
export function setInputState(sink: PipelineEventSink, run: ChannelRun, connected: boolean): void {
  if (run.inputConnected === connected) return;
  run.inputConnected = connected;
  // The session's reconnect window counts from the loss; an input back within it continues the session.
  const session = run.session;
  if (session && !connected && session.lostAt === undefined) {
    session.lostAt = Date.now();
    sink.push({ kind: 'session', run, session, op: 'lost' });
  } else if (session && connected && session.lostAt !== undefined) {
    session.lostAt = undefined;
    sink.push({ kind: 'session', run, session, op: 'back' });
  }
  sink.push({ kind: 'input', run, connected });
  sink.poke();
}

/** A segment of the channel's input: it opens a session when none is on air, and moves the session's end. */
function sessionSegment(sink: PipelineEventSink, run: ChannelRun, e: Extract<LivePipelineEvent, { type: 'segment' }>): void {
  if (!run.session) {
    if (run.stopping) return;
    run.session = newSession(e.startMs);
    sink.push({ kind: 'session', run, session: run.session, op: 'open' });
    sink.poke();
  }
  run.session.segment(e.rendition, e.startMs, Math.round(e.durationSeconds * 1000));
}
