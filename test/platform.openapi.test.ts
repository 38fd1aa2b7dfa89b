import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerOpenApi } from '../src/platform/openapi.ts';
import { startPlatform, type TestPlatform } from './helpers/platform.ts';

const ROOT = new URL('..', import.meta.url).pathname;

describe('the OpenAPI document', () => {
  let p: TestPlatform;
  let doc: any;
  beforeAll(async () => {
    p = await startPlatform('pglite', { MEDIAPLANE_ROLE: 'api', MEDIAPLANE_PUBLIC_URL: 'https://media.example.org' });
    doc = await (await fetch(`${p.baseUrl}/openapi.json`)).json();
  }, 120_000);
  afterAll(() => p?.stop());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
      Object.entries(ops).map(([method, op]: [string, any]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );

  it("names every operation (stable operationId in the spec's words), describes it in one line and tags it with its module", () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(40);
    for (const { name, op } of ops) {
      expect(op.operationId, name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(op.description, name).toMatch(/\S/);
      expect(op.description, name).not.toContain('\n');
      expect(op.tags?.length, name).toBe(1);
    }
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const byName = Object.fromEntries(ops.map((o) => [o.name, o.op.operationId]));
    expect(byName['GET /vod/v1/assets']).toBe('list_vod_assets');
    expect(byName['POST /vod/v1/files/start']).toBe('start_file_upload');
    expect(byName['GET /notifications/v1/webhook/signature-secret']).toBe('get_webhook_signature_secret');
    expect(byName['DELETE /core/v1/api-key/{id}']).toBe('delete_api_key');
    expect(doc.tags.map((t: any) => t.name)).toEqual(expect.arrayContaining(['Core', 'Notifications', 'Transcoder', 'VOD assets', 'VOD files']));
  });

  it('carries the license and the public URL as its server', () => {
    expect(doc.info.license).toMatchObject({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
    expect(doc.servers).toEqual([{ url: 'https://media.example.org' }]);
  });

  it("passes Spectral's spectral:oas ruleset with no error, warning, information or hint", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediaplane-spectral-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const spectral = join(ROOT, 'node_modules/.bin/spectral');
      const { stdout } = await promisify(execFile)(
        spectral,
        ['lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--fail-severity', 'hint', '--quiet'],
        {
          cwd: ROOT,
        },
      ).catch((e) => e);
      const results = JSON.parse(stdout) as { code: string; message: string; path: string[] }[];
      expect(results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a route that is not documented', () => {
  for (const [what, schema] of [
    ['a description', { tags: ['X'], summary: 'List things' }],
    ['a summary', { tags: ['X'], description: 'Lists things.' }],
    ['a tag', { summary: 'List things', description: 'Lists things.' }],
  ] as const) {
    it(`is refused when it is registered without ${what}`, async () => {
      const app = Fastify();
      await registerOpenApi(app, 'http://localhost:8080');
      expect(() => app.get('/x/v1/things', { schema }, async () => ({}))).toThrow(/route GET \/x\/v1\/things has no/);
      await app.close().catch(() => {});
    });
  }

  it('is refused when its operationId is taken', async () => {
    const app = Fastify();
    await registerOpenApi(app, 'http://localhost:8080');
    app.get('/x/v1/things', { schema: { tags: ['X'], summary: 'List things', description: 'Lists things.' } }, async () => ({}));
    expect(() => app.get('/y/v1/things', { schema: { tags: ['Y'], summary: 'List things', description: 'Lists other things.' } }, async () => ({}))).toThrow(
      /both have the operationId list_things/,
    );
    await app.close().catch(() => {});
  });
});
