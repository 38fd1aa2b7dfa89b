import { describe, expect, it } from 'vitest';
import { retriesExhausted, retryDelayMs } from '../src/modules/notifications/retry.ts';
import { blockedReason } from '../src/platform/addressGuard.ts';
import { addressGuard, checkWebhookUrl } from '../src/modules/notifications/urlPolicy.ts';

describe('retry schedule', () => {
  const cfg = { retryBaseMs: 10_000, retryMaxDelayMs: 3_600_000, retryPeriodSeconds: 86_400 };

  it('doubles from the base up to the cap, jittered within the upper half', () => {
    const top = (n: number) => retryDelayMs(n, cfg, () => 1);
    const bottom = (n: number) => retryDelayMs(n, cfg, () => 0);
    expect([1, 2, 3, 4, 5].map(top)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
    expect([1, 2, 3].map(bottom)).toEqual([5_000, 10_000, 20_000]);
    expect(top(9)).toBe(2_560_000);
    expect(top(10)).toBe(3_600_000);
    expect(top(1000)).toBe(3_600_000);
    expect(retryDelayMs(3, cfg, () => 0.5)).toBe(30_000);
  });

  it('is exhausted once a run of failures has lasted the retry period', () => {
    const since = new Date('2026-01-01T00:00:00Z');
    expect(retriesExhausted(since, new Date('2026-01-01T23:59:59Z'), cfg)).toBe(false);
    expect(retriesExhausted(since, new Date('2026-01-02T00:00:00Z'), cfg)).toBe(true);
  });
});

describe('webhook address policy', () => {
  it('allows only public unicast addresses', () => {
    for (const ok of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(blockedReason(ok), ok).toBeUndefined();
    for (const [address, range] of [
      ['127.0.0.1', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['192.168.0.1', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['::1', 'loopback'],
      ['fe80::1', 'linkLocal'],
      ['fd00::1', 'uniqueLocal'],
      ['::ffff:10.0.0.1', 'private'],
      ['64:ff9b::a00:1', 'rfc6052'],
      ['2002:a00:1::', '6to4'],
    ]) {
      expect(blockedReason(address), address).toBe(`${address} is a ${range} address`);
    }
  });

  it('checks URLs when they are written, as a delivery would judge them', async () => {
    // A name that does not resolve (no network here) is judged again at each delivery.
    expect(await checkWebhookUrl('https://hooks.mediaplane.invalid/x', false)).toBe('https://hooks.mediaplane.invalid/x');
    expect(await checkWebhookUrl('http://127.0.0.1:8080/x', true)).toBe('http://127.0.0.1:8080/x');
    await expect(checkWebhookUrl('http://127.0.0.1:8080/x', false)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl('http://localhost:8080/x', false)).rejects.toThrow(/^url: localhost resolves to (127\.0\.0\.1|::1) is a loopback address/);
    await expect(checkWebhookUrl('http://acme.localhost:8080/x', false)).rejects.toThrow(/acme\.localhost resolves to 127\.0\.0\.1 is a loopback address/);
    await expect(checkWebhookUrl('http://ACME.LocalHost.:8080/x', false)).rejects.toThrow(/loopback/);
    expect(await checkWebhookUrl('http://acme.localhost:8080/x', true)).toBe('http://acme.localhost:8080/x');
    await expect(checkWebhookUrl('file:///etc/passwd', true)).rejects.toThrow(/http or https/);
    await expect(checkWebhookUrl('https://user:pass@hooks.mediaplane.invalid/x', true)).rejects.toThrow(/credentials/);
    await expect(checkWebhookUrl('https://user@hooks.mediaplane.invalid/x', true)).rejects.toThrow(/credentials/);
  });

  it('refuses a connection to a name that resolves to a private address', async () => {
    const err = await new Promise<Error | null>((resolve) => addressGuard('localhost', { all: true }, (e) => resolve(e)));
    expect(err?.message).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1) is a loopback address/);
  });
});
