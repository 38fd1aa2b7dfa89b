import { describe, expect, it } from 'vitest';
import { createRestreamDestination, type RestreamEvent, type RestreamState } from '../src/media/live/index.ts';
import { quietLog, waitFor } from './helpers/live.ts';

/** The restream supervisor alone: the address guard, and what it reports while it has no input. */
describe('Restream destination', () => {
  it('refuses a private destination host unless allowed, reports it once, and names the setting without the key', async () => {
    const states: RestreamState[] = [];
    const events: RestreamEvent[] = [];
    const dest = createRestreamDestination({
      url: 'rtmp://127.0.0.1:1/live',
      streamKey: 'very-secret-key',
      allowPrivate: false,
      log: quietLog(),
      onState: (s) => states.push(s),
      onEvent: (e) => events.push(e),
      retryInitialMs: 20,
      retryMaxMs: 40,
    });
    expect(dest.state().status).toBe('WaitingForInput');
    dest.setSource({ url: 'rtmp://127.0.0.1:2/live/channel?token=internal-token' });
    // Several retries, one event: failures are reported per transition.
    await waitFor('two failed attempts', () => states.filter((s) => s.status === 'Retrying').length >= 2, 10_000);
    await dest.stop();
    expect(events).toEqual([{ type: 'failed', message: expect.stringContaining('MEDIAPLANE_RESTREAM_ALLOW_PRIVATE') }]);
    expect(dest.state().status).toBe('Retrying');
    expect(JSON.stringify([states, events])).not.toContain('very-secret-key');
    expect(JSON.stringify([states, events])).not.toContain('internal-token');
  });

  it('waits without failing while the channel has no input, and again when the input goes away', async () => {
    const events: RestreamEvent[] = [];
    const dest = createRestreamDestination({
      url: 'rtmp://127.0.0.1:1/live',
      streamKey: 'k',
      allowPrivate: true,
      log: quietLog(),
      onState: () => {},
      onEvent: (e) => events.push(e),
      retryInitialMs: 20,
    });
    dest.setSource({ url: 'rtmp://127.0.0.1:2/live/x' });
    dest.setSource(null);
    await waitFor('waiting for input', () => dest.state().status === 'WaitingForInput', 10_000);
    await dest.stop();
    expect(events).toEqual([]);
  });
});
