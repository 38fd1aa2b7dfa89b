import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/** Allowed domains and the tenant's streaming settings, through the routes (app.inject). */
describeEachDb('Streaming settings and allowed domains', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    other = await p.createTenant();
  });
  afterAll(() => p.stop());

  it('adds, lists and deletes allowed domains, refuses a duplicate and a non-domain, and keeps tenants apart', async () => {
    expect((await t.json('GET', '/streaming/v1/domains')).body).toEqual([]);
    const a = await t.json('POST', '/streaming/v1/domains', { url: 'https://www.Example.com/page' });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ playerDomainId: expect.any(String), analyticsDomainId: expect.any(String), url: 'https://www.Example.com/page' });
    const b = await t.json('POST', '/streaming/v1/domains', { url: '*.example.org' });
    expect(b.status).toBe(200);
    const dup = await t.json('POST', '/streaming/v1/domains', { url: 'www.example.com' });
    expect(dup.status).toBe(409);
    expect(dup.body.status.code).toBe('domain_already_allowed');
    const bad = await t.json('POST', '/streaming/v1/domains', { url: 'not a domain' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('url');
    expect((await t.json('GET', '/streaming/v1/domains')).body.map((d: any) => d.url)).toEqual(['https://www.Example.com/page', '*.example.org']);

    // Another tenant sees none of them and cannot delete them (404, like a missing one).
    expect((await other.json('GET', '/streaming/v1/domains')).body).toEqual([]);
    const foreign = await other.call('DELETE', `/streaming/v1/domains?playerDomainId=${a.body.playerDomainId}`);
    expect(foreign.status).toBe(404);

    expect((await t.call('DELETE', `/streaming/v1/domains?analyticsDomainId=${b.body.analyticsDomainId}`)).status).toBe(200);
    expect((await t.call('DELETE', '/streaming/v1/domains')).status).toBe(400);
    expect((await t.json('GET', '/streaming/v1/domains')).body.map((d: any) => d.playerDomainId)).toEqual([a.body.playerDomainId]);
    expect((await t.json('GET', '/streaming/v1/settings')).body.allowedDomains).toEqual([a.body]);
    expect((await t.call('DELETE', `/streaming/v1/domains?playerDomainId=${a.body.playerDomainId}`)).status).toBe(200);
  });

  it('answers every field of the settings, with a signing key per tenant shown to admins only, and tenant defaults', async () => {
    const res = await t.json('GET', '/streaming/v1/settings');
    expect(res.status).toBe(200);
    const s = res.body;
    const origin = p.config.publicUrl.origin;
    expect(s).toMatchObject({
      tenantId: t.id,
      tenantName: t.name,
      playerEncryptedData: expect.any(String),
      contentAcquisitionInfo: {
        acquireContentUrl: `${origin}/player/v1/${t.id}/{assetId}/source`,
        sourceConfigUrl: `${origin}/player/v1/${t.id}/{assetId}/source`,
        authorization: { tokenRequiredPolicy: false, signingKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), signingAlgorithm: 'HS256' },
      },
      licenseAcquisitionInfo: {
        enabled: true,
        authorization: { signingKey: null, signingAlgorithm: 'HS256' },
        endpoints: [
          { licenseUrl: `${origin}/drm/v1/licenses/clearkey`, certificateUrl: null, systemName: 'ClearKey', systemId: 'e2719d58-a985-b3c9-781a-b030af78d30e' },
        ],
      },
      mediaplanePlayerInfo: { embedUrl: `${origin}/player/v1/${t.id}`, sourceConfigUrl: `${origin}/player/v1/${t.id}/{assetId}/source` },
      capInfo: { enabled: false, signingKey: s.contentAcquisitionInfo.authorization.signingKey, limit: 1 },
      allowedDomains: [],
      playerConfigInfo: { devToolsAccess: false, analytics: true, codeObfuscation: false },
    });
    // The same key on every read; another tenant has its own.
    const key = s.contentAcquisitionInfo.authorization.signingKey;
    expect((await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey).toBe(key);
    const theirs = (await other.json('GET', '/streaming/v1/settings')).body;
    expect(theirs.tenantId).toBe(other.id);
    expect(theirs.contentAcquisitionInfo.authorization.signingKey).not.toBe(key);

    // A Viewer key reads the settings with the key masked, and may not change them.
    const viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'viewer', roleType: 'Viewer' })).body.key;
    const viewer = p.client(t.id, t.name, viewerKey);
    const seen = (await viewer.json('GET', '/streaming/v1/settings')).body;
    expect(seen.contentAcquisitionInfo.authorization.signingKey).toBe('********');
    expect(seen.capInfo.signingKey).toBe('********');
    expect((await viewer.json('PATCH', '/streaming/v1/settings', { tokenRequired: 'Enabled' })).status).toBe(403);
    expect((await viewer.json('POST', '/streaming/v1/domains', { url: 'example.net' })).status).toBe(403);

    const patched = await t.json('PATCH', '/streaming/v1/settings', { tokenRequired: 'Enabled', analytics: 'Disabled', capLimit: 3 });
    expect(patched.status).toBe(200);
    expect(patched.body.contentAcquisitionInfo.authorization.tokenRequiredPolicy).toBe(true);
    expect(patched.body.playerConfigInfo.analytics).toBe(false);
    expect(patched.body.capInfo.limit).toBe(3);
    expect((await t.json('PATCH', '/streaming/v1/settings', { cap: 'Maybe' })).status).toBe(400);
    expect((await other.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.tokenRequiredPolicy).toBe(false);
    expect((await other.json('GET', '/streaming/v1/settings')).body.playerConfigInfo.analytics).toBe(true);
    await t.json('PATCH', '/streaming/v1/settings', { tokenRequired: 'Disabled', analytics: 'Enabled', capLimit: 1 });
  });
});
