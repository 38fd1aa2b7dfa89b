import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { autoRecordedSessions, type AutoRecordedSession } from '../live/index.ts';
import { presetById } from '../transcoder/index.ts';
import { CATCHUP_DAYS, createRecording, recordRecorderEvent, wakeRecorder } from './service.ts';
import { recorderAutoSessions, recorderRecordings } from './tables.ts';

/** `2026-11-27 22:08:05 UTC`: the time in an automatic recording's title. */
const titleTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/**
 * Automatic recording (docs/decisions/recorder.md, "Automatic recording"), one step of the Recorder's pass: every
 * on-air session of a channel with `autoRecord` on (live's sessions, read through its front door) gets a recording of
 * its own, open-ended from the session's start while it is on air (catch-up that grows), and given the session's end
 * once the session is over; the Recorder then records it as any recording (Available, archive, outputs, events).
 */
export async function autoRecordPass(ctx: PlatformContext): Promise<void> {
  // A session that ended before the channel's retained timeline has nothing left to record.
  const sessions = await autoRecordedSessions(ctx, Date.now() - ctx.config.live.retentionSeconds * 1000);
  if (!sessions.length) return;
  const known = await ctx.db
    .select()
    .from(recorderAutoSessions)
    .where(
      inArray(
        recorderAutoSessions.sessionId,
        sessions.map((s) => s.id),
      ),
    );
  const bySession = new Map(known.map((k) => [k.sessionId, k]));
  for (const s of sessions) {
    const k = bySession.get(s.id);
    if (k && (k.ended || s.endMs === null)) continue;
    try {
      if (!k) await openRecording(ctx, s);
      else await endRecording(ctx, s as AutoRecordedSession & { endMs: number }, k.recordingId);
    } catch (err) {
      ctx.log.warn({ err, sessionId: s.id, channelId: s.channelId }, 'automatic recording not made; tried again at the next pass');
    }
  }
}

/** The session's recording: catch-up on, the channel's autoRecord archive and outputs, titled by the channel and the time. */
async function openRecording(ctx: PlatformContext, s: AutoRecordedSession): Promise<void> {
  // A session whose input produced nothing (not even one segment's length) is no recording.
  if (s.endMs !== null && s.endMs <= s.startMs) return;
  const now = Date.now();
  const current = (date: string | null) => date === null || Date.parse(date) > now;
  const { archive, outputs } = s.autoRecord;
  // Dates were in the future when autoRecord was set; one that has passed since means its archive or output is not wanted.
  const wanted = outputs.filter((o) => current(o.expirationDate));
  const unknown = wanted.filter((o) => !presetById(o.preset));
  if (unknown.length)
    ctx.log.warn({ channelId: s.channelId, presets: unknown.map((o) => o.preset) }, 'autoRecord names presets that no longer exist; left out');
  const ended = s.endMs !== null;
  await createRecording(
    ctx,
    s.tenantId,
    {
      source: {
        type: 'LiveChannel',
        liveChannelDetails: {
          channelId: s.channelId,
          start: new Date(s.startMs).toISOString(),
          ...(ended ? { end: new Date(s.endMs!).toISOString() } : {}),
        },
      },
      catchup: { enabled: true },
      archive:
        archive.enabled && current(archive.expirationDate)
          ? {
              enabled: true,
              delaySeconds: archive.delaySeconds,
              public: archive.public,
              ...(archive.expirationDate ? { expirationDate: archive.expirationDate } : {}),
            }
          : { enabled: false },
      outputs: wanted.filter((o) => presetById(o.preset)).map((o) => ({ preset: o.preset, ...(o.expirationDate ? { expirationDate: o.expirationDate } : {}) })),
      title: `${s.channelName.slice(0, 990)} ${titleTime(s.startMs)}`,
    },
    {
      // The session is claimed in the recording's transaction: one recording per session, whichever worker is first.
      claim: async (tx, recordingId) =>
        (
          await tx
            .insert(recorderAutoSessions)
            .values({ sessionId: s.id, tenantId: s.tenantId, recordingId, ended })
            .onConflictDoNothing()
            .returning({ id: recorderAutoSessions.sessionId })
        ).length > 0,
    },
  );
}

/** The session is over: its recording ends where the session did (the Recorder finishes it, trimming what it copied past that). */
async function endRecording(ctx: PlatformContext, s: AutoRecordedSession & { endMs: number }, recordingId: string): Promise<void> {
  const r = recorderRecordings;
  const end = new Date(Math.max(s.endMs, s.startMs + 1));
  await ctx.db.transaction(async (tx) => {
    const moved = await tx
      .update(r)
      .set({
        end,
        catchupExpirationTime: new Date(Math.max(Date.now(), end.getTime()) + CATCHUP_DAYS * 86400_000),
        lastModificationDate: new Date(),
      })
      .where(and(eq(r.id, recordingId), isNull(r.end), inArray(r.status, ['Pending', 'Live'])))
      .returning({ id: r.id });
    if (moved.length) {
      await recordRecorderEvent(tx, s.tenantId, 'recorder.recording.updated', { id: recordingId, end: end.toISOString() });
      await wakeRecorder(tx);
    }
    await tx.update(recorderAutoSessions).set({ ended: true }).where(eq(recorderAutoSessions.sessionId, s.id));
  });
}
