import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, Socket } from 'node:net';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const BIN = new URL('../../bin/mediaplane.js', import.meta.url).pathname;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface Run {
  child: ChildProcess;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a program with a small, explicit environment (none of the test runner's MEDIAPLANE_* or DATABASE_URL). */
export function start(command: string, args: string[], env: Record<string, string>, cwd = ROOT): Run {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exit };
}

export const mediaplane = (args: string[], env: Record<string, string>, cwd = ROOT): Run => start(process.execPath, [BIN, ...args], env, cwd);

/** Runs a CLI command to its end; kills it if it takes longer than the timeout. */
export async function cli(args: string[], env: Record<string, string>, cwd = ROOT, timeoutMs = 60_000): Promise<{ code: number | null; out: string }> {
  const r = mediaplane(args, env, cwd);
  const timer = setTimeout(() => r.child.kill('SIGKILL'), timeoutMs);
  const { code } = await r.exit;
  clearTimeout(timer);
  return { code, out: r.output() };
}

export async function waitReady(base: string, server: Run, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`server exited early:\n${server.output()}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready after ${timeoutMs} ms:\n${server.output()}`);
}

/** Whether something accepts connections on the port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}
