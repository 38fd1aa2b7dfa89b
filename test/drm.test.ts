import { execFileSync } from 'node:child_process';
import { createDecipheriv, constants, createHmac, privateDecrypt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/media.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const CLEARKEY = 'e2719d58-a985-b3c9-781a-b030af78d30e';
const WIDEVINE = 'edef8ba9-79d6-4ace-a3c8-27dcd51d21ed';
const PLAYREADY = '9a04f079-9840-4286-ab92-e65be0885f95';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  isArray: (n) => ['ContentKey', 'DRMSystem', 'HLSSignalingData'].includes(n),
});

function cpix(contentId: string, kids: string[], { v1 = false, delivery = '' } = {}): string {
  const systems = kids.flatMap((kid) =>
    [CLEARKEY, WIDEVINE, PLAYREADY].map(
      (sys) =>
        `<cpix:DRMSystem kid="${kid}" systemId="${sys}"><cpix:PSSH/><cpix:ContentProtectionData/>${v1 ? '<cpix:URIExtXKey/>' : '<cpix:HLSSignalingData playlist="media"/><cpix:HLSSignalingData playlist="master"/>'}</cpix:DRMSystem>`,
    ),
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<cpix:CPIX ${v1 ? `id="${contentId}"` : `contentId="${contentId}" version="2.3"`} xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" xmlns:speke="urn:aws:amazon:com:speke" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">`,
    delivery,
    `<cpix:ContentKeyList>${kids.map((k) => `<cpix:ContentKey kid="${k}" commonEncryptionScheme="cenc"/>`).join('')}</cpix:ContentKeyList>`,
    `<cpix:DRMSystemList>${systems.join('')}</cpix:DRMSystemList>`,
    `<cpix:ContentKeyUsageRuleList>${kids.map((k, i) => `<cpix:ContentKeyUsageRule kid="${k}" intendedTrackType="${i ? 'AUDIO' : 'VIDEO'}"/>`).join('')}</cpix:ContentKeyUsageRuleList>`,
    '</cpix:CPIX>',
  ].join('');
}

/** The PSSH box in a CPIX answer: its type and system id. */
function pssh(b64: string) {
  const b = Buffer.from(b64, 'base64');
  return { size: b.readUInt32BE(0), type: b.toString('latin1', 4, 8), systemId: b.subarray(12, 28).toString('hex') };
}
const hexId = (uuid: string) => uuid.replace(/-/g, '');

describeEachDb('DRM key server, policies, tokens and licenses', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  const { dir, cleanup } = tempDir('mediaplane-drm-cert-');
  let certDer: string;
  let privateKey: string;
  const speke = (tenant: TestTenant, xml: string, v = 2, type?: string) =>
    tenant.fetch(`${p.baseUrl}/drm/v1/speke/v${v}`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id, 'content-type': type ?? 'application/xml' },
      body: xml,
    });

  beforeAll(async () => {
    p = await startInProcess(kind);
    [t, other] = [await p.createTenant(), await p.createTenant()];
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=packager'],
      { stdio: 'ignore' },
    );
    privateKey = readFileSync(join(dir, 'key.pem'), 'utf8');
    certDer = readFileSync(join(dir, 'cert.pem'), 'utf8').replace(/-----[^-]+-----|\s/g, '');
  });
  afterAll(async () => {
    await p?.stop();
    cleanup();
  });

  it('answers a SPEKE 2.0 CPIX 2.3 request with the requested key ids, keys and DRM system data', async () => {
    const kids = [randomUUID(), randomUUID()];
    const res = await speke(t, cpix('movie-1', kids));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/xml/);
    const doc = parser.parse(await res.text()).CPIX;
    expect(doc['@_contentId']).toBe('movie-1');
    expect(doc.ContentKeyList.ContentKey.map((k: any) => k['@_kid'])).toEqual(kids);
    const keys = doc.ContentKeyList.ContentKey.map((k: any) => Buffer.from(k.Data.Secret.PlainValue, 'base64'));
    for (const k of keys) expect(k).toHaveLength(16);
    expect(keys[0].equals(keys[1])).toBe(false);
    const systems = doc.DRMSystemList.DRMSystem;
    expect(systems).toHaveLength(6);
    for (const s of systems) {
      const box = pssh(s.PSSH);
      expect(box.type).toBe('pssh');
      expect(box.systemId).toBe(s['@_systemId'] === CLEARKEY ? '1077efecc0b24d02ace33c1e52e2fb4b' : hexId(s['@_systemId']));
      expect(s.HLSSignalingData.map((h: any) => h['@_playlist'])).toEqual(['media', 'master']);
      expect(Buffer.from(s.HLSSignalingData[0]['#text'], 'base64').toString()).toMatch(/^#EXT-X-KEY:METHOD=(AES-128|SAMPLE-AES),URI="/);
      expect(Buffer.from(s.ContentProtectionData, 'base64').toString()).toContain('<cenc:pssh>');
    }
    // The ClearKey PSSH lists the key id; the usage rules come back as sent.
    const clearKey = systems.find((s: any) => s['@_systemId'] === CLEARKEY && s['@_kid'] === kids[0]);
    expect(Buffer.from(clearKey.PSSH, 'base64').subarray(32, 48).toString('hex')).toBe(hexId(kids[0]));
    expect(doc.ContentKeyUsageRuleList.ContentKeyUsageRule).toHaveLength(2);

    // Asked again, the same keys; another tenant with the same key ids gets keys of its own.
    const again = parser.parse(await (await speke(t, cpix('movie-1', kids))).text()).CPIX;
    expect(Buffer.from(again.ContentKeyList.ContentKey[0].Data.Secret.PlainValue, 'base64').equals(keys[0])).toBe(true);
    const theirs = parser.parse(await (await speke(other, cpix('movie-1', kids))).text()).CPIX;
    expect(Buffer.from(theirs.ContentKeyList.ContentKey[0].Data.Secret.PlainValue, 'base64').equals(keys[0])).toBe(false);
    // One key never protects two contents.
    const reused = await speke(t, cpix('movie-2', [kids[0]]));
    expect(reused.status).toBe(409);
    expect((await reused.json()).status.code).toBe('drm_key_id_in_use');
  });

  it('answers SPEKE 1.0 (CPIX 2.0 with id) with URIExtXKey', async () => {
    const kid = randomUUID();
    const res = await speke(t, cpix('live-7', [kid], { v1: true }), 1);
    expect(res.status).toBe(200);
    const doc = parser.parse(await res.text()).CPIX;
    expect(doc['@_id']).toBe('live-7');
    const clearKey = doc.DRMSystemList.DRMSystem.find((s: any) => s['@_systemId'] === CLEARKEY);
    expect(Buffer.from(clearKey.URIExtXKey, 'base64').toString()).toBe(`${p.config.publicUrl.origin}/drm/v1/licenses/aes128/${kid}`);
    expect(doc.DRMSystemList.DRMSystem.find((s: any) => s['@_systemId'] === PLAYREADY).ProtectionHeader).toEqual(expect.any(String));
  });

  it('encrypts keys to the DeliveryKey certificate, and only to the DRM certificate once one is set', async () => {
    const kid = randomUUID();
    const delivery = `<cpix:DeliveryDataList><cpix:DeliveryData><cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>${certDer}</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey></cpix:DeliveryData></cpix:DeliveryDataList>`;
    const clear = parser.parse(await (await speke(t, cpix('enc-1', [kid]))).text()).CPIX;
    const clearKey = Buffer.from(clear.ContentKeyList.ContentKey[0].Data.Secret.PlainValue, 'base64');

    const pem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    expect((await t.json('PUT', '/drm/v1/certificate', { certificate: pem })).status).toBe(200);
    expect((await t.json('GET', '/drm/v1/certificate')).body).toMatchObject({ subject: 'CN=packager', fingerprint256: expect.any(String) });
    expect((await other.json('GET', '/drm/v1/certificate')).status).toBe(404);
    const refused = await speke(t, cpix('enc-1', [kid]));
    expect(refused.status).toBe(403);
    expect((await refused.json()).status.code).toBe('drm_encrypted_delivery_required');

    const res = await speke(t, cpix('enc-1', [kid], { delivery }));
    expect(res.status).toBe(200);
    const doc = parser.parse(await res.text()).CPIX;
    const data = doc.DeliveryDataList.DeliveryData;
    const cipherOf = (v: any) => Buffer.from(v.EncryptedValue.CipherData.CipherValue, 'base64');
    const documentKey = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
      cipherOf(data.DocumentKey.Data.Secret),
    );
    const aes = (c: Buffer) => {
      const d = createDecipheriv('aes-256-cbc', documentKey, c.subarray(0, 16));
      return Buffer.concat([d.update(c.subarray(16)), d.final()]);
    };
    const macKey = aes(cipherOf(data.MACMethod.Key));
    const secret = doc.ContentKeyList.ContentKey[0].Data.Secret;
    expect(secret.PlainValue).toBeUndefined();
    expect(createHmac('sha512', macKey).update(cipherOf(secret)).digest('base64')).toBe(secret.ValueMAC);
    expect(aes(cipherOf(secret)).equals(clearKey)).toBe(true);
    expect((await t.call('PUT', '/drm/v1/certificate', { certificate: null })).status).toBe(204);
    expect((await speke(t, cpix('enc-1', [kid]))).status).toBe(200);
  });

  describe('hostile CPIX', () => {
    const code = async (res: Response) => [res.status, (await res.json()).status.code];
    it('refuses malformed XML, entity declarations, oversized documents and non-CPIX with a clear 4xx', async () => {
      expect(await code(await speke(t, '<cpix:CPIX contentId="x"><cpix:ContentKeyList>'))).toEqual([400, 'cpix_malformed']);
      const bomb =
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>' +
        `<cpix:CPIX contentId="&lol2;" xmlns:cpix="urn:dashif:org:cpix"><cpix:ContentKeyList><cpix:ContentKey kid="${randomUUID()}"/></cpix:ContentKeyList></cpix:CPIX>`;
      expect(await code(await speke(t, bomb))).toEqual([400, 'cpix_doctype_refused']);
      const big = cpix('big', [randomUUID()]).replace('<cpix:ContentKeyList>', `<!--${'x'.repeat(300 * 1024)}--><cpix:ContentKeyList>`);
      expect(await code(await speke(t, big))).toEqual([413, 'payload_too_large']);
      expect(await code(await speke(t, '<html><body/></html>'))).toEqual([400, 'cpix_malformed']);
      const deep = `<cpix:CPIX contentId="x" xmlns:cpix="urn:dashif:org:cpix">${'<a>'.repeat(30_000)}${'</a>'.repeat(30_000)}</cpix:CPIX>`;
      expect(await code(await speke(t, deep))).toEqual([400, 'cpix_malformed']);
      expect(await code(await speke(t, cpix('x', ['not-a-uuid'])))).toEqual([400, 'cpix_malformed']);
      expect(await code(await speke(t, cpix('x', [randomUUID()]).replace(WIDEVINE, randomUUID())))).toEqual([400, 'drm_system_unsupported']);
      expect((await speke(t, JSON.stringify({ a: 1 }), 2, 'application/json')).status).toBe(400);
      const anonymous = await p.fetch(`${p.baseUrl}/drm/v1/speke/v2`, {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: cpix('x', [randomUUID()]),
      });
      expect(anonymous.status).toBe(401);
    });
  });

  it('manages policies, templates and settings per tenant', async () => {
    const templates = (await t.json('GET', '/drm/v1/policies/templates')).body;
    expect(templates.items.map((x: any) => x.id)).toContain('rental-48h');
    const created = await t.json('POST', '/drm/v1/policies', { templateId: 'rental-48h', name: 'Weekend rental', concurrentStreams: 2 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Weekend rental',
      persistent: true,
      playbackDurationSeconds: 172800,
      concurrentStreams: 2,
      allowedOutputs: ['Aes128', 'ClearKey'],
    });
    const id = created.body.id;
    expect((await t.json('PATCH', `/drm/v1/policies/${id}`, { allowedOutputs: ['ClearKey'], rentalWindowSeconds: null })).body).toMatchObject({
      allowedOutputs: ['ClearKey'],
      rentalWindowSeconds: null,
      name: 'Weekend rental',
    });
    expect((await t.json('GET', `/drm/v1/policies/${id}`)).body.allowedOutputs).toEqual(['ClearKey']);
    const list = (await t.json('GET', '/drm/v1/policies')).body;
    expect(list).toMatchObject({ totalCount: 1, pageNumber: 1, hasMore: false });
    for (const [m, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      expect((await other.json(m, `/drm/v1/policies/${id}`, body)).status).toBe(404);
    }
    expect((await other.json('GET', '/drm/v1/policies')).body.totalCount).toBe(0);
    expect((await t.json('POST', '/drm/v1/policies', { licenseDurationSeconds: 60 })).status).toBe(400);
    expect((await t.json('POST', '/drm/v1/policies', { templateId: 'nope' })).status).toBe(400);
    expect((await t.json('POST', '/drm/v1/policies', { name: 'x', allowedOutputs: ['Hdmi'] })).status).toBe(400);

    expect((await t.json('PATCH', '/drm/v1/settings', { defaultPolicyId: id, tokenTtlSeconds: 120 })).body).toMatchObject({
      defaultPolicyId: id,
      tokenTtlSeconds: 120,
    });
    expect((await other.json('PATCH', '/drm/v1/settings', { defaultPolicyId: id })).status).toBe(404);
    expect((await other.json('GET', '/drm/v1/settings')).body).toMatchObject({ defaultPolicyId: null, tokenTtlSeconds: 600 });
    expect((await t.call('DELETE', `/drm/v1/policies/${id}`)).status).toBe(204);
    expect((await t.json('GET', '/drm/v1/settings')).body.defaultPolicyId).toBeNull();
    expect((await t.json('GET', `/drm/v1/policies/${id}`)).status).toBe(404);
  });

  it('grants licenses with a DRM token as the policy allows, and logs every request', async () => {
    const keys = (await t.json('POST', '/drm/v1/keys', { contentId: 'film-9', count: 1, drmSystems: ['Widevine'] })).body;
    expect(keys.keys[0]).toMatchObject({ keyId: expect.any(String), drmSystems: [{ name: 'Widevine' }] });
    const { keyId, keyHex } = keys.keys[0];
    const kid = Buffer.from(hexId(keyId), 'hex').toString('base64url');
    const policy = (
      await t.json('POST', '/drm/v1/policies', {
        name: 'DASH only, one stream',
        allowedOutputs: ['ClearKey'],
        concurrentStreams: 1,
        licenseDurationSeconds: 3600,
      })
    ).body;
    const token = async (body: object) => (await t.json('POST', '/drm/v1/tokens', { contentId: 'film-9', policyId: policy.id, ...body })).body.token;
    const clearKey = (tok: string | undefined, kids = [kid], type?: string) =>
      p.fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(tok ? { authorization: `Bearer ${tok}` } : {}) },
        body: JSON.stringify({ kids, ...(type ? { type } : {}) }),
      });
    const a = await token({ userId: 'alice' });
    const res = await clearKey(a);
    expect(res.status).toBe(200);
    const license = await res.json();
    expect(license).toEqual({ keys: [{ kty: 'oct', kid, k: Buffer.from(keyHex, 'hex').toString('base64url') }], type: 'temporary' });
    expect((await clearKey(a)).status).toBe(200); // the same stream renews

    const codeOf = async (r: Response) => [r.status, (await r.json()).status.code];
    expect(await codeOf(await clearKey(undefined))).toEqual([401, 'drm_token_missing']);
    // hls.js posts the CDM's message without Content-Type: read as JSON (a license in the e2e test); another type is a 415.
    const raw = (body: string, type?: string) =>
      p.fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a}`, ...(type ? { 'content-type': type } : {}) },
        body: new TextEncoder().encode(body),
      });
    expect((await raw('{"kids":')).status).toBe(400);
    expect((await raw(JSON.stringify({ kids: [kid] }), 'text/plain')).status).toBe(415);
    expect(await codeOf(await clearKey(`${a.slice(0, -3)}abc`))).toEqual([401, 'drm_token_invalid']);
    expect(await codeOf(await clearKey(await token({ userId: 'alice' })))).toEqual([403, 'drm_concurrent_streams_exceeded']);
    expect(await codeOf(await clearKey(a, [kid], 'persistent-license'))).toEqual([403, 'drm_persistence_not_allowed']);
    expect(await codeOf(await clearKey(a, [Buffer.alloc(16, 7).toString('base64url')]))).toEqual([403, 'drm_key_not_allowed']);
    expect(await codeOf(await p.fetch(`${p.baseUrl}/drm/v1/licenses/aes128/${keyId}?token=${a}`))).toEqual([403, 'drm_output_not_allowed']);
    const shortLived = (await t.json('POST', '/drm/v1/tokens', { contentId: 'film-9', expiresInSeconds: 10 })).body;
    expect(new Date(shortLived.expirationDate).getTime() - Date.now()).toBeLessThanOrEqual(10_000);
    const hlsKey = await p.fetch(`${p.baseUrl}/drm/v1/licenses/aes128/${keyId}`, { headers: { authorization: `Bearer ${shortLived.token}` } });
    expect(hlsKey.status).toBe(200);
    expect(Buffer.from(await hlsKey.arrayBuffer()).toString('hex')).toBe(keyHex);

    // Tokens are for the tenant's own content and policies only.
    expect((await other.json('POST', '/drm/v1/tokens', { contentId: 'film-9' })).status).toBe(404);
    expect((await t.json('POST', '/drm/v1/tokens', { contentId: 'no-such-content' })).status).toBe(404);
    expect((await t.json('POST', '/drm/v1/tokens', {})).status).toBe(400);

    const metrics = (await t.json('GET', '/drm/v1/statistics/license-metrics')).body;
    expect(metrics).toMatchObject({ licenseRequests: 7, licenses: 3, errors: 4, uniqueUsers: 1, uniqueContents: 1 });
    const codes = (await t.json('GET', '/drm/v1/statistics/license-error-codes')).body.items.map((x: any) => x.errorCode).sort();
    // A request without a usable token names no tenant: it is not in any tenant's log.
    expect(codes).toEqual(['drm_concurrent_streams_exceeded', 'drm_key_not_allowed', 'drm_output_not_allowed', 'drm_persistence_not_allowed'].sort());
    expect((await t.json('GET', '/drm/v1/statistics/license-count')).body).toMatchObject({ count: 3, byType: { ClearKey: 2, Aes128: 1 } });
    expect((await t.json('GET', '/drm/v1/statistics/license-requests?limit=2')).body).toMatchObject({ totalCount: 7, pageSize: 2, hasMore: true });
    expect((await t.json('GET', '/drm/v1/statistics/requests-histogram?interval=Day')).body.items).toEqual([
      { time: expect.any(String), requests: 7, licenses: 3, errors: 4 },
    ]);
    expect((await t.json('GET', '/drm/v1/statistics/license-count?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
  });
});
