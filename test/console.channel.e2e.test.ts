import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { recordChannelStats } from '../src/modules/live/stats.ts';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth, chartInk, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const { dir, cleanup } = tempDir('mediaplane-console-channel-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * The console's channel page beyond its settings (test/console.live.e2e.test.ts): the status and statistics charts
 * (the statistics written as a running channel's owner writes them, so no encoder runs here), the schedule of its
 * events, deleting a recording and the channel; and the same read-only for a Viewer key.
 */
describeOnDb('pglite', 'Tenant console: channel charts, schedule and deletion', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let viewerKey: string;
  let channelId: string;
  const minute = Math.floor(Date.now() / 60_000) * 60_000;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' })).body.key;
    channelId = (await t.json('POST', '/live/v1/channels', { name: 'Charts', input: { inputLoss: { type: 'COLOR' } } })).body.id;
    // Ten minutes on air, 30 to 21 minutes ago: the bitrate climbing from 1000 to 1900 kb/s, 60 segments a minute.
    await recordChannelStats(
      p.ctx.db,
      Array.from({ length: 10 }, (_, m) => ({
        channelId,
        tenantId: t.id,
        minute: new Date(minute - (30 - m) * 60_000),
        values: { inputBitrate: 1000 + m * 100, inputFrameRate: 25, segmentsWritten: 60, ingestConnectedSeconds: 60, concurrentViewers: m },
      })),
    );
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  const openChannel = async (key: string) => {
    const page = await signIn(browser, p.baseUrl, t.id, key);
    await page.goto(`${p.baseUrl}/console#/channels/${channelId}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Charts');
    return page;
  };
  const chart = (page: Page, name: string) => page.locator(`figure[data-metric="${name}"]`);

  it('draws the status and each statistic over time, with the values in a table, for the range chosen', async () => {
    const page = await openChannel(t.key);
    await expect.poll(() => chart(page, 'Status since this page opened').locator('.legend').textContent(), { timeout: 30_000 }).toContain('Off');
    const bitrate = chart(page, 'Input bitrate');
    await expect
      .poll(() => bitrate.locator('[role="img"]').getAttribute('aria-label'), { timeout: 30_000 })
      .toMatch(/10 values .* with no gap, lowest 1000, highest 1900, latest 1900/);
    // One line through the ten points, drawn by uPlot on its canvas.
    await expect.poll(() => chartInk(bitrate), { timeout: 30_000 }).toBeGreaterThan(100);
    await bitrate.getByText('Values of Input bitrate').click();
    expect(await bitrate.locator('tbody tr').count()).toBe(10);
    expect(await bitrate.locator('tbody tr').last().locator('td').last().textContent()).toBe('1900');
    // Counters are summed per period: 5-minute buckets of 60 segments a minute hold at most 300.
    await page.getByLabel('Range').selectOption({ label: 'Last 6 hours' });
    const segments = chart(page, 'Segments written');
    await expect.poll(() => segments.locator('[role="img"]').getAttribute('aria-label'), { timeout: 30_000 }).toMatch(/highest 300\b/);
    expect(await chart(page, 'Dropped frames').textContent()).toContain('No values in this range');
    await reviewScreen(page, SHOTS, 'console-channel-charts');
    await atPhoneWidth(page, `${SHOTS}/console-channel-charts-phone.png`);
    await page.context().close();
  }, 120_000);

  it('schedules an event on the week view and the agenda, refuses an end before the start, and deletes the event', async () => {
    const page = await openChannel(t.key);
    page.on('dialog', (d) => void d.accept());
    const tomorrow = new Date(minute + 24 * 3600_000);
    const at = (hh: number, mm: number) => {
      const d = new Date(tomorrow);
      d.setHours(hh, mm, 0, 0);
      return d;
    };
    const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Event title').fill('Morning show');
    await page.getByLabel('Starts').fill(local(at(9, 0)));
    await page.getByLabel('Ends').fill(local(at(8, 0)));
    await page.getByRole('button', { name: 'Schedule event' }).click();
    await expect.poll(() => page.getByText('The end must be after the start.').isVisible()).toBe(true);
    await page.getByLabel('Ends').fill(local(at(10, 30)));
    await page.getByRole('button', { name: 'Schedule event' }).click();
    const item = page.getByRole('list', { name: 'Events of the week' }).getByRole('listitem').filter({ hasText: 'Morning show' });
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(1);
    expect(await item.locator('.badge').textContent()).toBe('Scheduled');
    const events = (await t.json('GET', `/live/v1/events?channelId=${channelId}`)).body.items;
    expect(events).toMatchObject([{ title: 'Morning show', start: at(9, 0).toISOString(), end: at(10, 30).toISOString(), status: 'Scheduled' }]);
    // The week view draws it in its day's row, and says so.
    expect(await page.locator('svg.schedule').getAttribute('aria-label')).toMatch(/^1 event .*Morning show/);
    expect(await page.locator('svg.schedule rect').count()).toBe(1);
    await page.getByRole('button', { name: 'Next week' }).click();
    await expect.poll(() => page.getByText('No events this week.').isVisible(), { timeout: 30_000 }).toBe(true);
    await page.getByRole('button', { name: 'This week' }).click();
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(1);
    await reviewScreen(page, SHOTS, 'console-channel-schedule');
    await atPhoneWidth(page, `${SHOTS}/console-channel-schedule-phone.png`);

    await item.getByRole('button', { name: 'Delete event Morning show' }).click();
    await expect.poll(async () => (await t.json('GET', `/live/v1/events?channelId=${channelId}`)).body.items.length, { timeout: 30_000 }).toBe(0);
    await expect.poll(() => page.getByText('No events this week.').isVisible(), { timeout: 30_000 }).toBe(true);
    await page.context().close();
  }, 120_000);

  it("edits an event's title, times, tags and metadata in place (PATCH: the same event, not a new one)", async () => {
    const day = new Date(minute + 2 * 24 * 3600_000);
    const at = (hh: number, mm: number) => {
      const d = new Date(day);
      d.setHours(hh, mm, 0, 0);
      return d;
    };
    const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    const { id } = (await t.json('POST', '/live/v1/events', { channelId, title: 'Talk', start: at(14, 0).toISOString(), end: at(15, 0).toISOString() })).body;
    const made = (await t.json('GET', `/live/v1/events/${id}`)).body;
    // Deleted however the test ends: the Viewer's test below counts the channel's events.
    onTestFinished(() => t.json('DELETE', `/live/v1/events/${id}`).then(() => {}));
    const page = await openChannel(t.key);
    const item = page.getByRole('list', { name: 'Events of the week' }).locator(`[data-event="${made.id}"]`);
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(1);
    await item.getByRole('button', { name: 'Edit event Talk' }).click();
    const form = page.getByRole('form', { name: 'Edit event Talk' });
    expect(await form.getByLabel('Start', { exact: true }).inputValue()).toBe(local(at(14, 0)));
    await form.getByLabel('Title', { exact: true }).fill('Panel');
    await form.getByLabel('Start', { exact: true }).fill(local(at(13, 30)));
    await form.getByLabel('End', { exact: true }).fill(local(at(13, 0)));
    await form.getByRole('button', { name: 'Save event' }).click();
    await expect.poll(() => form.getByText('The end must be after the start.').isVisible()).toBe(true);
    await form.getByLabel('End', { exact: true }).fill(local(at(16, 0)));
    await form.getByLabel('Tags', { exact: true }).fill('live, panel');
    await form.getByLabel('Metadata', { exact: true }).fill('room: B');
    await form.getByRole('button', { name: 'Save event' }).click();
    await expect.poll(() => item.locator('strong').textContent(), { timeout: 30_000 }).toBe('Panel');
    expect(await page.getByRole('form', { name: /^Edit event/ }).count()).toBe(0);
    const events = (await t.json('GET', `/live/v1/events?channelId=${channelId}`)).body.items;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: made.id,
      createDate: made.createDate,
      title: 'Panel',
      start: at(13, 30).toISOString(),
      end: at(16, 0).toISOString(),
      tags: ['live', 'panel'],
      metadata: { room: 'B' },
      status: 'Scheduled',
    });
    expect(await page.locator('svg.schedule').getAttribute('aria-label')).toMatch(/Panel/);
    await page.context().close();
  }, 120_000);

  it("draws every channel's events on one schedule on the Live screen, each linking to its channel", async () => {
    const other = (await t.json('POST', '/live/v1/channels', { name: 'Studio B', input: { inputLoss: { type: 'COLOR' } } })).body.id as string;
    const day = new Date(minute + 24 * 3600_000);
    const at = (hh: number, mm: number, days = 0) => {
      const d = new Date(day.getTime() + days * 24 * 3600_000);
      d.setHours(hh, mm, 0, 0);
      return d.toISOString();
    };
    const schedule = async (channel: string, title: string, start: string, end: string) => {
      const { id } = (await t.json('POST', '/live/v1/events', { channelId: channel, title, start, end })).body;
      onTestFinished(() => t.json('DELETE', `/live/v1/events/${id}`).then(() => {}));
      return id as string;
    };
    onTestFinished(() => t.json('DELETE', `/live/v1/channels/${other}`).then(() => {}));
    // Two events at the same time on two channels (tomorrow), and one of the second channel a week later.
    const brief = await schedule(channelId, 'Morning brief', at(9, 0), at(10, 0));
    const match = await schedule(other, 'Match', at(9, 30), at(11, 0));
    await schedule(other, 'Late show', at(21, 0, 7), at(22, 0, 7));

    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.getByRole('link', { name: 'Live' }).click();
    const agenda = page.getByRole('list', { name: 'Events of all channels this week' });
    await expect.poll(() => agenda.getByRole('listitem').count(), { timeout: 30_000 }).toBe(2);
    // In the order of their start, each naming its channel with a link to it.
    expect(await agenda.getByRole('listitem').evaluateAll((items) => items.map((li) => (li as HTMLElement).dataset.event))).toEqual([brief, match]);
    expect(await agenda.getByRole('link', { name: 'Charts: channel of Morning brief' }).getAttribute('href')).toBe(`#/channels/${channelId}`);
    expect(await agenda.getByRole('link', { name: 'Studio B: channel of Match' }).getAttribute('href')).toBe(`#/channels/${other}`);
    const chart = page.getByRole('img', { name: /^2 events from/ });
    expect(await chart.getAttribute('aria-label')).toMatch(/Morning brief on Charts .*; Match on Studio B /);
    // At the same time, so in two lanes of the day's row, neither hiding the other.
    const bars = chart.locator('rect');
    expect(await bars.count()).toBe(2);
    expect(new Set(await bars.evaluateAll((rects) => rects.map((r) => r.getAttribute('y')))).size).toBe(2);
    await reviewScreen(page, SHOTS, 'console-channels-schedule');
    await atPhoneWidth(page, `${SHOTS}/console-channels-schedule-phone.png`);

    await page.getByRole('button', { name: 'Next week' }).click();
    await expect.poll(() => agenda.getByRole('listitem').count(), { timeout: 30_000 }).toBe(1);
    expect(await agenda.getByRole('listitem').textContent()).toMatch(/Late show.*Studio B$/);
    await page.getByRole('button', { name: 'This week' }).click();
    await expect.poll(() => agenda.getByRole('listitem').count(), { timeout: 30_000 }).toBe(2);

    // A bar opens its channel's page, as the agenda's link does.
    await bars.nth(1).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Studio B');
    expect(page.url()).toBe(`${p.baseUrl}/console#/channels/${other}`);
    await page.goBack();
    await agenda.getByRole('link', { name: 'Charts: channel of Morning brief' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Charts');
    await page.context().close();
  }, 120_000);

  it('a Viewer key sees the charts and the schedule with every write control disabled', async () => {
    await t.json('POST', '/live/v1/events', {
      channelId,
      title: 'Evening news',
      start: new Date(minute + 3600_000).toISOString(),
      end: new Date(minute + 2 * 3600_000).toISOString(),
    });
    const page = await openChannel(viewerKey);
    await expect.poll(() => chart(page, 'Input bitrate').locator('[role="img"]').getAttribute('aria-label'), { timeout: 30_000 }).toMatch(/10 values/);
    const item = page.getByRole('listitem').filter({ hasText: 'Evening news' });
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(1);
    expect(await item.getByRole('button', { name: 'Delete event Evening news' }).isDisabled()).toBe(true);
    expect(await item.getByRole('button', { name: 'Edit event Evening news' }).isDisabled()).toBe(true);
    for (const name of ['Schedule event', 'Delete channel']) expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).toBe(true);
    expect(await page.getByLabel('Event title').isDisabled()).toBe(true);
    await reviewScreen(page, SHOTS, 'console-channel-charts-viewer');
    await page.context().close();
  }, 120_000);

  it('deletes a recording and then the channel, each after a confirmation; a refusal keeps them', async () => {
    const hour = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
    const recordingId = (
      await t.json('POST', '/cvr/v1/recordings', {
        title: 'Tomorrow',
        source: { type: 'LiveChannel', liveChannelDetails: { channelId, start: hour(20), end: hour(21) } },
        catchup: { enabled: true },
      })
    ).body.id;
    const page = await openChannel(t.key);
    let answer = false;
    page.on('dialog', (d) => void (answer ? d.accept() : d.dismiss()));
    const rec = page.locator(`[data-recording="${recordingId}"]`);
    await expect.poll(() => rec.count(), { timeout: 30_000 }).toBe(1);
    await rec.getByRole('button', { name: 'Delete recording Tomorrow' }).click();
    expect((await t.json('GET', `/cvr/v1/recordings/${recordingId}`)).status).toBe(200);
    answer = true;
    await rec.getByRole('button', { name: 'Delete recording Tomorrow' }).click();
    await expect.poll(async () => (await t.json('GET', `/cvr/v1/recordings/${recordingId}`)).status, { timeout: 30_000 }).toBe(404);
    await expect.poll(() => page.getByText('No recording of this channel yet.').isVisible(), { timeout: 30_000 }).toBe(true);

    answer = false;
    await page.getByRole('button', { name: 'Delete channel' }).click();
    expect((await t.json('GET', `/live/v1/channels/${channelId}`)).status).toBe(200);
    answer = true;
    await page.getByRole('button', { name: 'Delete channel' }).click();
    await page.waitForURL(/#\/channels$/);
    expect((await t.json('GET', `/live/v1/channels/${channelId}`)).status).toBe(404);
    await expect.poll(() => page.getByText('No channels yet: create one below.').isVisible(), { timeout: 30_000 }).toBe(true);
    await page.context().close();
  }, 120_000);
});
