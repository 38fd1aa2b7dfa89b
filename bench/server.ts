import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../test/helpers/process.ts';
import { until } from '../test/helpers/until.ts';

export { freePort };

const ROOT = new URL('..', import.meta.url).pathname;

export interface BenchServer {
  /** `http://127.0.0.1:<port>`, the server's public URL too. */
  base: string;
  port: number;
  child: ChildProcess;
  /** The tenant `bench` created on it, and the headers of its API key. */
  tenant: { id: string; apiKey: { key: string } };
  headers: { 'x-api-key': string; 'x-tenant-id': string };
  /** SIGTERM, and waits for the exit (nothing when it exited already). */
  stop(): Promise<void>;
}

export interface BenchServerOptions {
  dataDir: string;
  /** `source`: `src/cli.ts` through tsx (the default); `built`: the compiled `bin/mediaplane.js`, as users run it. */
  entry?: 'source' | 'built';
  /** Flags for the server's node (`--cpu-prof`, ...). */
  nodeFlags?: string[];
  /** More environment for the server, over the bench's defaults. */
  env?: Record<string, string>;
  /** How long a start may take (a first start creates the database), and how often it is asked. */
  timeoutMs?: number;
  everyMs?: number;
}

/**
 * A platform of the bench's own, in a process: one port, the embedded database and store under `dataDir`, admin token
 * `bench`, warnings only; resolves once `/healthz` answers and a tenant `bench` exists.
 */
export async function startBenchServer(o: BenchServerOptions): Promise<BenchServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const entry = o.entry === 'built' ? ['bin/mediaplane.js'] : ['--import', 'tsx', 'src/cli.ts'];
  const child = spawn(process.execPath, [...(o.nodeFlags ?? []), ...entry, 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MEDIAPLANE_DATA_DIR: o.dataDir,
      MEDIAPLANE_ADMIN_TOKEN: 'bench',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      MEDIAPLANE_STORAGE_URL: '',
      MEDIAPLANE_PUBLIC_URL: base,
      ...o.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  try {
    await until(
      () =>
        fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      Boolean,
      { timeoutMs: o.timeoutMs ?? 60_000, everyMs: o.everyMs ?? 200, what: 'the server to start' },
    );
    const tenant = await json('POST', `${base}/admin/v1/tenants`, { name: 'bench' }, { authorization: 'Bearer bench' });
    return { base, port, child, tenant, headers: { 'x-api-key': tenant.apiKey.key, 'x-tenant-id': tenant.id }, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export async function json(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}
