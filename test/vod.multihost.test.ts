import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { tenantClient, type TestTenant } from './helpers/platform.ts';
import { BIN } from './helpers/process.ts';
import { startSwift, type SwiftServer } from './helpers/swift.ts';
import { uploadFile } from './helpers/upload.ts';
import { PROCESS_START_TIMEOUT_MS, until } from './helpers/until.ts';

/**
 * Issue 24, item 4: only the database and the object store are shared. Five hosts, each a network namespace with an
 * address of its own on one bridge: PostgreSQL, the S3-compatible store (Swift), the API, and two workers, each worker
 * with its own data directory. One long source is encoded in chunks across both workers; one worker host is killed
 * (its process with -9, its link down) in the middle of a chunk; the other finishes a complete, continuous output.
 *
 * Needs root (namespaces, veth pairs) and PostgreSQL's server binaries; skipped elsewhere.
 */
/** Where PostgreSQL's server programs are: on the PATH, or where Debian's packages put them (not on the PATH). */
const PG_BIN = (() => {
  const candidates = [
    '',
    ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse() : []).map((v) => `/usr/lib/postgresql/${v}/bin/`),
  ];
  for (const dir of candidates) {
    try {
      execFileSync(`${dir}initdb`, ['--version'], { stdio: 'ignore' });
      return dir;
    } catch {
      // not here
    }
  }
  return undefined;
})();
const canRun = (() => {
  if (userInfo().uid !== 0 || PG_BIN === undefined) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const SECONDS = 14;
const NET = `10.231.${100 + (process.pid % 150)}`;
const tag = `mp${process.pid % 100000}`;
const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

interface Host {
  ns: string;
  address: string;
}

/** A host: a namespace, a veth pair whose outer end is on the bridge, the inner end at `address`. */
function addHost(name: string, k: number): Host {
  const ns = `${tag}-${name}`;
  const address = `${NET}.${k}`;
  ip('netns', 'add', ns);
  ip('link', 'add', `${tag}h${k}`, 'type', 'veth', 'peer', 'name', `${tag}n${k}`);
  ip('link', 'set', `${tag}n${k}`, 'netns', ns);
  ip('link', 'set', `${tag}h${k}`, 'master', `${tag}br`);
  ip('link', 'set', `${tag}h${k}`, 'up');
  ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', `${tag}n${k}`);
  ip('-n', ns, 'link', 'set', `${tag}n${k}`, 'up');
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  return { ns, address };
}

describe.runIf(canRun)('VOD on many machines: API, two workers, PostgreSQL and S3 as separate hosts', () => {
  const { dir, cleanup } = tempDir();
  const hosts: Host[] = [];
  const children: ChildProcess[] = [];
  const logs = new Map<ChildProcess, string>();
  let swift: SwiftServer | undefined;
  let database: Host;
  let api: Host;
  const workers: { host: Host; child: ChildProcess }[] = [];
  let t: TestTenant;
  let base = '';
  const afterCleanup: (() => void)[] = [];

  const run = (host: Host, command: string[], env: Record<string, string>): ChildProcess => {
    const child = spawn('ip', ['netns', 'exec', host.ns, ...command], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    logs.set(child, '');
    const keep = (c: Buffer) => logs.set(child, logs.get(child)! + c.toString());
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    children.push(child);
    return child;
  };
  const ready = (url: string, child: ChildProcess) =>
    until(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited:\n${logs.get(child)}`);
        return fetch(url).then(
          (r) => r.status,
          () => 0,
        );
      },
      (s) => s === 200,
      { timeoutMs: PROCESS_START_TIMEOUT_MS, what: url },
    );

  beforeAll(async () => {
    ip('link', 'add', `${tag}br`, 'type', 'bridge');
    ip('addr', 'add', `${NET}.1/24`, 'dev', `${tag}br`);
    ip('link', 'set', `${tag}br`, 'up');
    database = addHost('db', 2);
    const store = addHost('s3', 3);
    api = addHost('api', 4);
    hosts.push(database, store, api, addHost('w1', 5), addHost('w2', 6));

    // PostgreSQL on its host, as its own server (initdb as the postgres user, trust on the hosts' network).
    const pgdata = mkdtempSync(join(tmpdir(), 'mediaplane-multihost-pg-'));
    chownSync(pgdata, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    chmodSync(pgdata, 0o700);
    execFileSync('runuser', ['-u', 'postgres', '--', `${PG_BIN}initdb`, '-D', pgdata, '-A', 'trust', '-U', 'postgres'], { stdio: 'ignore' });
    appendFileSync(join(pgdata, 'pg_hba.conf'), `host all all ${NET}.0/24 trust\n`);
    const postgres = run(
      database,
      ['runuser', '-u', 'postgres', '--', `${PG_BIN}postgres`, '-D', pgdata, '-c', `listen_addresses=${database.address}`, '-k', pgdata],
      {},
    );
    await until(
      async () => {
        if (postgres.exitCode !== null) throw new Error(`postgres exited:\n${logs.get(postgres)}`);
        const c = new pg.Client({ connectionString: `postgres://postgres@${database.address}:5432/postgres` });
        return c.connect().then(
          () => c.end().then(() => true),
          () => false,
        );
      },
      Boolean,
      { timeoutMs: 60_000, what: 'PostgreSQL on its host' },
    );
    afterCleanup.push(() => rmSync(pgdata, { recursive: true, force: true }));

    swift = await startSwift({ netns: store.ns, host: store.address });
    const common = {
      LOG_LEVEL: 'info',
      DATABASE_URL: `postgres://postgres@${database.address}:5432/postgres`,
      MEDIAPLANE_STORAGE_URL: `s3://mediaplane-multihost?endpoint=${encodeURIComponent(swift.endpoint)}&region=us-east-1&forcePathStyle=true`,
      AWS_ACCESS_KEY_ID: swift.accessKeyId,
      AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
      MEDIAPLANE_PUBLIC_URL: `http://${api.address}:8080`,
      MEDIAPLANE_ADMIN_TOKEN: 'multihost-token',
      MEDIAPLANE_DRM_MASTER_KEY: '33'.repeat(32),
      MEDIAPLANE_URL_SIGNING_SECRET: 'multihost-signing',
      MEDIAPLANE_CHUNK_THRESHOLD_SECONDS: '6',
      MEDIAPLANE_CHUNK_SECONDS: '4',
      MEDIAPLANE_TRANSCODE_LEASE_SECONDS: '4',
      MEDIAPLANE_SWEEP_INTERVAL_MS: '500',
    };
    base = `http://${api.address}:8080`;
    const apiData = mkdtempSync(join(dir, 'api-'));
    const apiChild = run(api, [process.execPath, BIN, 'serve'], {
      ...common,
      MEDIAPLANE_ROLE: 'api',
      HOST: '0.0.0.0',
      PORT: '8080',
      MEDIAPLANE_DATA_DIR: apiData,
    });
    await ready(`${base}/readyz`, apiChild);
    for (const host of hosts.slice(3)) {
      const data = mkdtempSync(join(dir, `${host.ns}-`));
      const child = run(host, [process.execPath, BIN, 'serve'], {
        ...common,
        MEDIAPLANE_ROLE: 'worker',
        HOST: '0.0.0.0',
        MEDIAPLANE_HEALTH_PORT: '8081',
        MEDIAPLANE_DATA_DIR: data,
      });
      await ready(`http://${host.address}:8081/readyz`, child);
      workers.push({ host, child });
    }
    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer multihost-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'multihost' }),
      })
    ).json()) as { id: string; name: string; apiKey: { key: string } };
    t = tenantClient(base, created.id, created.name, created.apiKey.key);
  }, 600_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await swift?.stop().catch(() => {});
    for (const h of hosts) {
      try {
        ip('netns', 'del', h.ns);
      } catch {
        // already gone
      }
    }
    try {
      ip('link', 'del', `${tag}br`);
    } catch {
      // already gone
    }
    for (const f of afterCleanup) f();
    cleanup();
  });

  it('encodes one long source across both worker hosts, loses one mid-chunk, and finishes a complete, continuous output', async () => {
    const clip = await makeClip(dir, 'clip', { width: 320, height: 180, seconds: SECONDS, fps: 25, audio: [{ language: 'eng', frequency: 440 }] });
    const fileId = await uploadFile(t, clip);
    const audio = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks.find((x: { type: string }) => x.type === 'Audio');
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: [audio] }], preset: 'hls-h264-ladder' });

    // The first worker host is lost while it encodes a part.
    const [victim, survivor] = workers;
    const db = new pg.Client({ connectionString: `postgres://postgres@${database.address}:5432/postgres` });
    await db.connect();
    await until(
      async () =>
        (await db.query(`select count(*)::int as n from vod_output_chunks where status = 'Processing' and lease_owner like $1`, [`%:${victim.child.pid}:%`]))
          .rows[0].n as number,
      (n) => n > 0,
      { timeoutMs: 120_000, everyMs: 100 },
    );
    victim.child.kill('SIGKILL');
    ip('-n', victim.host.ns, 'link', 'set', `${tag}n5`, 'down');

    const asset = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${body.id}`),
        (r) => ['Available', 'Error'].includes(r.body.status),
        { timeoutMs: 300_000 },
      )
    ).body;
    expect(asset.status, asset.errorMessage).toBe('Available');
    await db.end();
    const done = (c: ChildProcess) => (logs.get(c) ?? '').split('\n').filter((l) => l.includes('"msg":"part transcoded"')).length;
    // Both hosts encoded parts; the survivor the rest, its lost part included.
    expect(done(survivor.child)).toBeGreaterThan(0);
    // Four chunks (the first makes the audio beside its video).
    expect(done(victim.child) + done(survivor.child)).toBe(4);
    const hls = asset.endpoints.find((e: { format: string }) => e.format === 'HLS');
    expect(Math.abs(hls.durationMilliseconds - SECONDS * 1000)).toBeLessThanOrEqual(40);
    const master = await (await fetch(hls.url)).text();
    const top = new URL(
      master.split('\n').find((l: string) => l && !l.startsWith('#'))!,
      hls.url,
    ).toString();
    const { stdout } = await promisify(execFile)('ffprobe', [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=nb_read_frames',
      '-of',
      'csv=p=0',
      top,
    ]);
    // Every frame of the source once: 14 s at 25 fps.
    // (ffprobe names a playlist's stream once per program it is in: the first count is the stream's.)
    expect(Number(/\d+/.exec(stdout)?.[0])).toBe(SECONDS * 25);
  }, 600_000);
});
