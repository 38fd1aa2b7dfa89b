import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, Socket } from 'node:net';
import { PROCESS_START_TIMEOUT_MS, until } from './until.ts';

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

export async function waitReady(base: string, server: Run, timeoutMs = PROCESS_START_TIMEOUT_MS): Promise<void> {
  const ready = async () => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`server exited early:\n${server.output()}`);
    return fetch(`${base}/readyz`).then(
      (r) => r.status,
      () => 0,
    ); // 0: not listening yet
  };
  await until(ready, (status) => status === 200, { timeoutMs, what: () => `${base}/readyz; output so far:\n${server.output()}` });
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
