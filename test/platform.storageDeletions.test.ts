import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { storageDeletions } from '../src/db/storageDeletions.ts';
import { channelPrefix } from '../src/modules/live/urls.ts';
import { sweepStorageDeletions } from '../src/platform/storageDeletions.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

// Files never outlive their rows: the transaction that deletes a row records its files' prefix, so files the process
// did not delete after the commit (it stopped, the store failed) are deleted by the sweep (docs/decisions/platform.md).
describeEachDb('files of deleted rows', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  const pending = async () => (await p.ctx.db.select().from(storageDeletions)).map((r) => r.prefix);

  it('a deletion the store failed after the commit is recorded with the row, and the sweep does it once due', async () => {
    const made = await t.json('POST', '/live/v1/channels', { name: 'deleted', input: { inputLoss: { type: 'COLOR' } } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const id = made.body.id as string;
    const key = `${channelPrefix(t.id, id)}hls/144p/seg_00001.ts`;
    await p.ctx.store.putObject(key, Buffer.from('segment'), 'video/mp2t');

    // The store fails as the row goes (as a process stopped at that moment would leave it): the files stay, recorded.
    const deletePrefix = p.ctx.store.deletePrefix.bind(p.ctx.store);
    p.ctx.store.deletePrefix = () => Promise.reject(new Error('the store is unreachable'));
    try {
      expect((await t.json('DELETE', `/live/v1/channels/${id}`)).status).toBe(200);
    } finally {
      p.ctx.store.deletePrefix = deletePrefix;
    }
    expect(await p.ctx.store.head(key)).toBeDefined();
    expect(await pending()).toContain(channelPrefix(t.id, id));

    // Not before its second pass is due; then the files and the record go.
    expect(await sweepStorageDeletions(p.ctx)).toBe(0);
    await p.ctx.db.update(storageDeletions).set({ dueAt: sql`now() - interval '1 second'` });
    expect(await sweepStorageDeletions(p.ctx)).toBeGreaterThan(0);
    expect(await p.ctx.store.head(key)).toBeUndefined();
    expect(await pending()).not.toContain(channelPrefix(t.id, id));
  });

  it('a recording output added again with the id of one deleted keeps its files past the second pass of the deleted one', async () => {
    const rec = await t.json('POST', '/cvr/v1/recordings', {
      source: {
        type: 'LiveChannel',
        liveChannelDetails: {
          channelId: (await t.json('POST', '/live/v1/channels', { name: 'src', input: { inputLoss: { type: 'COLOR' } } })).body.id,
          start: new Date(Date.now() + 3_600_000).toISOString(),
          end: new Date(Date.now() + 3_660_000).toISOString(),
        },
      },
      title: 'again',
    });
    expect(rec.status, JSON.stringify(rec.body)).toBe(200);
    const recordingId = rec.body.id as string;
    const add = () => t.json('POST', `/cvr/v1/recordings/${recordingId}/outputs`, { id: 'download', preset: 'mp4-h264-download' });
    expect((await add()).status).toBe(200);
    expect((await t.json('DELETE', `/cvr/v1/recordings/${recordingId}/outputs/download`)).status).toBe(200);
    expect((await add()).status).toBe(200);
    const prefix = (await pending()).find((x) => x.includes(recordingId));
    expect(prefix).toBeUndefined();
  });
});
