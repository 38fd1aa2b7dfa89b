import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { until } from './until.ts';

/**
 * A real S3-compatible server for the tests: OpenStack Swift with its s3api middleware, one replica on one local
 * device, from Debian's packages (scripts/ensure-system-deps.sh swift). Credentials: access key `test:tester`,
 * secret `testing` (tempauth). See docs/decisions/vod-files.md for why Swift.
 */
export interface SwiftServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const server = (name: string, port: number, dir: string, user: string, host: string) => `[DEFAULT]
devices = ${dir}/devices
mount_check = false
bind_ip = ${host}
bind_port = ${port}
workers = 0
swift_dir = ${dir}
user = ${user}
log_level = ERROR
[pipeline:main]
pipeline = ${name}-server
[app:${name}-server]
use = egg:swift#${name}
`;

// tempauth needs a cache client to exist; nothing listens on the port, so every lookup simply misses.
const proxy = (port: number, dir: string, user: string, host: string) => `[DEFAULT]
bind_ip = ${host}
bind_port = ${port}
workers = 0
swift_dir = ${dir}
user = ${user}
log_level = ERROR
[pipeline:main]
pipeline = catch_errors proxy-logging cache s3api tempauth copy slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:9
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
`;

const RINGS = `
import sys
from swift.common.ring import RingBuilder
d = sys.argv[1]
for name, port in zip(['account', 'container', 'object'], sys.argv[2:5]):
    b = RingBuilder(6, 1, 1)
    b.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': sys.argv[5], 'port': int(port), 'device': 'd1', 'weight': 1})
    b.rebalance()
    b.get_ring().save(f'{d}/{name}.ring.gz')
`;

/**
 * `netns`: the servers run in that network namespace (a host of its own, test/vod.multihost.test.ts), listening on
 * `host`, its address; by default on this machine's loopback.
 */
export async function startSwift({ netns, host = '127.0.0.1' }: { netns?: string; host?: string } = {}): Promise<SwiftServer> {
  try {
    execFileSync('swift-proxy-server', ['--help'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'OpenStack Swift is not installed: run `bash scripts/ensure-system-deps.sh swift` (Debian packages swift-proxy, swift-object, swift-container, swift-account)',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-swift-'));
  mkdirSync(join(dir, 'devices', 'd1'), { recursive: true });
  const [account, container, object, proxyPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const user = userInfo().username;
  writeFileSync(join(dir, 'swift.conf'), '[swift-hash]\nswift_hash_path_suffix = mediaplane-test\n[storage-policy:0]\nname = default\ndefault = yes\n');
  writeFileSync(join(dir, 'account-server.conf'), server('account', account, dir, user, host));
  writeFileSync(join(dir, 'container-server.conf'), server('container', container, dir, user, host));
  writeFileSync(join(dir, 'object-server.conf'), server('object', object, dir, user, host));
  writeFileSync(join(dir, 'proxy-server.conf'), proxy(proxyPort, dir, user, host));
  // Swift's own interpreter (the first line of its scripts), not whichever python3 comes first on PATH.
  const python = readFileSync(execFileSync('which', ['swift-ring-builder'], { encoding: 'utf8' }).trim(), 'utf8')
    .split('\n')[0]
    .replace(/^#!\s*/, '')
    .split(' ')[0];
  execFileSync(python, ['-c', RINGS, dir, String(account), String(container), String(object), host]);

  const children: ChildProcess[] = ['account', 'container', 'object', 'proxy'].map((name) =>
    netns
      ? spawn('ip', ['netns', 'exec', netns, `swift-${name}-server`, join(dir, `${name}-server.conf`)], { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(`swift-${name}-server`, [join(dir, `${name}-server.conf`)], { stdio: ['ignore', 'ignore', 'pipe'] }),
  );
  // Should the test process die without stopping Swift, its servers must not outlive it.
  const killAll = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
  process.once('exit', killAll);
  const stderr: string[] = [];
  for (const c of children) c.stderr!.on('data', (d) => stderr.push(String(d)));

  const endpoint = `http://${host}:${proxyPort}`;
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(
      children.map((c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : (c.once('exit', () => resolve()), c.kill('SIGTERM'))))),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when the proxy answers and the storage servers behind it have accepted their first account write.
  const answering = async () => {
    if (children.some((c) => c.exitCode !== null)) throw new Error('a Swift server exited');
    const up = await Promise.all(
      [account, container, object, proxyPort].map((port) =>
        fetch(`http://${host}:${port}/`).then(
          () => true,
          () => false,
        ),
      ),
    );
    return up.every(Boolean);
  };
  // Started from a test file's beforeAll: under its hook timeout (vitest.config.ts), yet generous for a loaded machine.
  await until(answering, Boolean, { timeoutMs: 50_000, everyMs: 200 }).catch(async (e: Error) => {
    await stop();
    throw new Error(`Swift did not start (${e.message}):\n${stderr.join('')}`);
  });
  return { endpoint, accessKeyId: 'test:tester', secretAccessKey: 'testing', stop };
}
