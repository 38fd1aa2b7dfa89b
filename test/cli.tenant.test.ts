import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { BIN } from './helpers/process.ts';
import { until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Each command is a process of its own, through tsx when dist/ is older than the sources: minutes on a loaded machine.
const SLOW = 240_000;

// The tenant's CLI as a user runs it: the real binary in a process of its own, against a platform on a real port.
// What it asks of the database is the SDK's and the API's, covered on both databases elsewhere: one database here.
describeOnDb('pglite', 'CLI: the tenant commands (bin/mediaplane.js)', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-cli-tenant-');
  const config = join(dir, 'xdg');
  let p: TestPlatform;
  let t: TestTenant;
  beforeAll(async () => {
    // webhooks tail and files import reach servers on this machine.
    p = await startPlatform(kind, { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true', MEDIAPLANE_FETCH_ALLOW_PRIVATE: 'true' });
    t = await p.createTenant();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    cleanup();
  });

  /** Runs the CLI with a small environment of its own: no credentials but the ones given. */
  const run = (args: string[], env: Record<string, string> = {}): Promise<Result> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: config, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });

  it(
    'login checks the key and stores the profile readable by its owner only; --profile and the environment pick credentials',
    async () => {
      const bad = await run(['login', '--url', p.baseUrl, '--tenant-id', t.id, '--api-key', 'mpk_wrong', '--profile', 'bad']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('The X-Api-Key is unknown or has been deleted');
      expect(existsSync(join(config, 'mediaplane', 'profiles.json'))).toBe(false);

      const ok = await run(['login', '--url', p.baseUrl, '--tenant-id', t.id, '--api-key', t.key, '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      const answer = JSON.parse(ok.stdout);
      expect(answer).toMatchObject({ profile: 'default', url: p.baseUrl, tenantId: t.id, tenantStatus: 'Active' });
      expect(ok.stdout).not.toContain(t.key);
      const file = join(config, 'mediaplane', 'profiles.json');
      expect(answer.path).toBe(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(config, 'mediaplane')).mode & 0o777).toBe(0o700);
      expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default).toEqual({ url: p.baseUrl, tenantId: t.id, apiKey: t.key });

      // A second profile for another tenant; --profile picks it, the environment overrides a stored value.
      const other = await p.createTenant();
      expect((await run(['login', '--url', p.baseUrl, '--tenant-id', other.id, '--api-key', other.key, '--profile', 'other'])).code).toBe(0);
      const keys = JSON.parse((await run(['keys', 'list', '--profile', 'other', '--json'])).stdout);
      expect(keys.map((k: { name: string }) => k.name)).toEqual(['initial admin key']);
      const overridden = await run(['keys', 'list', '--json'], { MEDIAPLANE_API_KEY: 'mpk_revoked' });
      expect(overridden.code).toBe(1);
      expect(JSON.parse(overridden.stdout).status.code).toBe('invalid_api_key');
      const missing = await run(['assets', 'list', '--profile', 'nobody']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('No profile named "nobody"');
    },
    SLOW,
  );

  it(
    'upload --wait --json prints one JSON document with the Available asset; assets list --json lists it',
    async () => {
      const clip = await makeClip(dir, 'show', { seconds: 2, width: 320, height: 180, audio: [{ language: 'eng', frequency: 440 }] });
      const up = await run(['upload', clip, '--preset', 'remux-hls-mp4', '--wait', '--json']);
      expect(up.code, up.stderr).toBe(0);
      // Nothing on standard error either: no progress without a terminal.
      expect(up.stderr).toBe('');
      const [uploaded, ...more] = JSON.parse(up.stdout);
      expect(more).toEqual([]);
      expect(uploaded).toMatchObject({ file: clip, fileId: expect.any(String), fileKey: expect.any(String) });
      expect(uploaded.asset).toMatchObject({ status: 'Available', preset: 'remux-hls-mp4', title: 'show.mp4' });
      // The file's audio track was asked for: the asset is not muted.
      expect(uploaded.asset.sources[0].transcodingTracks).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'Audio', trackSelector: { trackId: '1' }, language: 'eng' })]),
      );
      expect(uploaded.asset.endpoints.map((e: { format: string }) => e.format)).toContain('HLS');

      const list = await run(['assets', 'list', '--json']);
      expect(list.code, list.stderr).toBe(0);
      const assets = JSON.parse(list.stdout);
      expect(assets.map((a: { id: string }) => a.id)).toEqual([uploaded.asset.id]);
      const text = await run(['assets', 'list']);
      expect(text.stdout).toMatch(new RegExp(`^${uploaded.asset.id}\\s+Available\\s+remux-hls-mp4`, 'm'));
    },
    SLOW,
  );

  it(
    "prints the API's message and exits non-zero on an API error; with --json the error shape is the one document",
    async () => {
      const id = '0190b0a0-0000-7000-8000-0000000000ff';
      const missing = await run(['assets', 'get', id]);
      expect(missing.code).toBe(1);
      expect(missing.stdout).toBe('');
      expect(missing.stderr).toMatch(/^Error: .*\(asset_not_found, HTTP 404/);
      const json = await run(['assets', 'delete', id, '--json']);
      expect(json.code).toBe(1);
      const body = JSON.parse(json.stdout);
      expect(body.status).toMatchObject({ code: 'asset_not_found', status: 404 });
      expect(json.stderr).toContain(body.status.message);
      const invalid = await run(['keys', 'create', 'x', '--role', 'Owner']);
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toContain('validation_failed');
      expect(invalid.stderr).toMatch(/roleType/);
    },
    SLOW,
  );

  it(
    'shows a progress bar per file on a terminal',
    async () => {
      const clip = await makeClip(dir, 'tty', { seconds: 1, width: 160, height: 90, audio: [] });
      // `script` gives the command a terminal; what it wrote there comes back on its standard output.
      const { stdout } = await promisify(execFile)('script', ['-qefc', `${process.execPath} ${BIN} upload ${clip} --preset remux-hls-mp4`, '/dev/null'], {
        env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: config, TERM: 'xterm' },
      });
      expect(stdout).toMatch(/tty\.mp4 {2}\[#{24}\] 100% {2}[\d.]+ KiB\/[\d.]+ KiB {2}[\d.]+ (B|KiB|MiB)\/s {2}in \d+:\d\d/);
      expect(stdout).toMatch(/tty\.mp4: file [0-9a-f-]{36}, asset [0-9a-f-]{36} \(remux-hls-mp4\)/);
    },
    SLOW,
  );

  it(
    'lists files, creates and deletes an API key, and starts, shows and stops a channel',
    async () => {
      const env = { MEDIAPLANE_URL: p.baseUrl, MEDIAPLANE_TENANT_ID: t.id, MEDIAPLANE_API_KEY: t.key };
      const started = (await t.json('POST', '/vod/v1/files/start', { name: 'listed.mp4', friendlyName: 'listed', fileSize: 10 })).body.fileId;
      const files = await run(['files', 'list', '--json'], env);
      expect(files.code, files.stderr).toBe(0);
      expect(JSON.parse(files.stdout).map((f: { id: string }) => f.id)).toContain(started);
      expect((await run(['files', 'list'], env)).stdout).toMatch(new RegExp(`^${started}\\s+Uploading\\s`, 'm'));

      const created = await run(['keys', 'create', 'ci reader', '--role', 'Viewer', '--json'], env);
      expect(created.code, created.stderr).toBe(0);
      const key = JSON.parse(created.stdout);
      expect(key).toMatchObject({ name: 'ci reader', roleType: 'Viewer', key: expect.stringMatching(/^mpk_/) });
      // The new key works, and the list shows it without its secret.
      expect((await run(['assets', 'list', '--json'], { ...env, MEDIAPLANE_API_KEY: key.key })).code).toBe(0);
      const listed = await run(['keys', 'list'], env);
      expect(listed.stdout).toMatch(new RegExp(`^${key.id}\\s+Viewer\\s`, 'm'));
      expect(listed.stdout).not.toContain(key.key);
      const deleted = await run(['keys', 'delete', key.id], env);
      expect([deleted.code, deleted.stdout.trim()]).toEqual([0, `API key ${key.id} deleted`]);
      expect((await run(['assets', 'list', '--json'], { ...env, MEDIAPLANE_API_KEY: key.key })).code).toBe(1);

      const channel = (
        await t.json('POST', '/live/v1/channels', {
          name: 'cli',
          input: { inputLoss: { type: 'COLOR', color: '#000000' } },
          qualities: [{ resolution: '180p' }],
        })
      ).body.id as string;
      expect(JSON.parse((await run(['channels', 'list', '--json'], env)).stdout).map((c: { id: string }) => c.id)).toEqual([channel]);
      expect((await run(['channels', 'status', channel], env)).stdout.trim()).toBe(`channel ${channel} Off`);
      const start = await run(['channels', 'start', channel, '--json'], env);
      expect(start.code, start.stderr).toBe(0);
      expect(JSON.parse(start.stdout)).toMatchObject({ id: channel, status: expect.stringMatching(/^(Starting|On)$/) });
      await until(
        async () => (await run(['channels', 'status', channel, '--json'], env)).stdout,
        (out) => JSON.parse(out).status === 'On',
        { timeoutMs: 120_000, everyMs: 1000, what: 'the channel to be On' },
      );
      const stop = await run(['channels', 'stop', channel], env);
      expect(stop.stdout.trim()).toMatch(new RegExp(`^channel ${channel} (Stopping|Off)$`));
      const unknown = await run(['channels', 'start', '0190b0a0-0000-7000-8000-0000000000ff'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/HTTP 404/);
    },
    SLOW,
  );

  it(
    'files import fetches a file from a URL and waits for it; a URL the platform refuses is told on standard error',
    async () => {
      const env = { MEDIAPLANE_URL: p.baseUrl, MEDIAPLANE_TENANT_ID: t.id, MEDIAPLANE_API_KEY: t.key };
      const clip = readFileSync(await makeClip(dir, 'imported', { seconds: 1, width: 160, height: 90 }));
      const origin = http.createServer((_req, res) => res.writeHead(200, { 'content-length': clip.length }).end(clip));
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/videos/imported.mp4`;
        const done = await run(['files', 'import', url, '--friendly-name', 'From the CLI', '--wait', '--json'], env);
        expect(done.code, done.stderr).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({ status: 'Completed', name: 'imported.mp4', friendlyName: 'From the CLI', fileSize: clip.length });
        const refused = await run(['files', 'import', 'ftp://127.0.0.1/a.mp4'], env);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('url: must use http or https, not ftp');
      } finally {
        origin.close();
      }
    },
    SLOW,
  );

  it(
    'webhooks tail prints the delivery attempts made while it runs',
    async () => {
      const env = { MEDIAPLANE_URL: p.baseUrl, MEDIAPLANE_TENANT_ID: t.id, MEDIAPLANE_API_KEY: t.key };
      const receiver = await WebhookReceiver.start();
      try {
        const hook = (await t.json('POST', '/notifications/v1/webhook', { name: 'tailed', url: receiver.url, eventTypes: ['vod.file.created'] })).body;
        const tail = run(['webhooks', 'tail', '--count', '2', '--interval', '200', '--json'], env);
        // Deliveries made once it watches: it prints nothing of what came before it.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        for (const name of ['a.mp4', 'b.mp4']) await t.json('POST', '/vod/v1/files/start', { name, friendlyName: name, fileSize: 10 });
        await receiver.waitFor((r) => r.length >= 2, 60_000);
        const { code, stdout, stderr } = await tail;
        expect(code, stderr).toBe(0);
        const attempts = JSON.parse(stdout);
        expect(attempts).toHaveLength(2);
        for (const a of attempts) {
          expect(a).toMatchObject({ type: 'vod.file.created', webhookId: hook.id, webhookName: 'tailed', responseCode: 200 });
        }
        const missing = await run(['webhooks', 'tail', '--webhook', '0190b0a0-0000-7000-8000-0000000000ff'], env);
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain('No webhook 0190b0a0-0000-7000-8000-0000000000ff in this tenant.');
      } finally {
        await receiver.close();
      }
    },
    SLOW,
  );

  it(
    'completes commands in bash and in zsh',
    async () => {
      const complete = async (words: string[]) => {
        const script = `source <(${process.execPath} ${BIN} completion bash); COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mediaplane_complete; echo "\${COMPREPLY[*]}"`;
        return (await promisify(execFile)('bash', ['-c', script], { env: { PATH: process.env.PATH ?? '', HOME: dir } })).stdout.trim().split(' ');
      };
      expect(await complete(['mediaplane', 'ass'])).toEqual(['assets']);
      expect(await complete(['mediaplane', 'assets', ''])).toEqual(expect.arrayContaining(['list', 'get', 'delete']));
      expect(await complete(['mediaplane', '--profile', 'x', 'channels', 's'])).toEqual(expect.arrayContaining(['start', 'stop', 'status']));
      expect(await complete(['mediaplane', 'upload', '--pr'])).toEqual(['--preset', '--profile']);
      // zsh runs the same function through its bashcompinit, which calls it with sh emulation (arrays from 0).
      const zsh = `autoload -U +X compinit && compinit -u; source <(${process.execPath} ${BIN} completion zsh); emulate sh -c 'COMP_WORDS=(mediaplane keys ""); COMP_CWORD=2; _mediaplane_complete; echo "\${COMPREPLY[*]}"'`;
      const fromZsh = (await promisify(execFile)('zsh', ['-f', '-c', zsh], { env: { PATH: process.env.PATH ?? '', HOME: dir } })).stdout.trim().split(' ');
      expect(fromZsh).toEqual(expect.arrayContaining(['list', 'create', 'delete']));
    },
    SLOW,
  );
});
