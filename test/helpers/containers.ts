import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './process.ts';
import { until } from './until.ts';

/**
 * The platform's container image on this machine kind, with podman (no Docker daemon, no registry reachable):
 * ../shared/notes/containers.md. `../shared/tools/container-base.sh` installs podman and builds, once per machine, a
 * local stand-in for node:20-bookworm-slim, which the Containerfile takes as its NODE_IMAGE argument; podman keeps the
 * layers it built between runs, so a build after a change of the sources redoes only the compile and the copies.
 */
const run = promisify(execFile);
/** The three sandbox settings of the notes: no ulimits (the sandbox refuses setrlimit), runc, the host's network. */
const CONF = '/tmp/mediaplane-containers.conf';
const ENV = { ...process.env, CONTAINERS_CONF: CONF };
export const IMAGE = 'localhost/mediaplane:test';

export async function podman(args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('podman', ['--runtime', 'runc', ...args], { env: ENV, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr || err.message };
  }
}

let image: Promise<{ built: true } | { unavailable: string }> | undefined;

/**
 * Builds the image from the working tree once per run (scripts/container-image.sh, which .ci/run starts early; a second
 * build waits for the first and finds its layers cached), or says why it cannot be had here (no root, no apt, no
 * container-base.sh): the container tests are then skipped with that reason. Installing podman and building the base
 * takes minutes the first time on a machine.
 */
export function containerImage(): Promise<{ built: true } | { unavailable: string }> {
  image ??= run('bash', [join(ROOT, 'scripts', 'container-image.sh')], { env: ENV, timeout: 40 * 60_000, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => {
      // The figure CI reports for the lead (README, "Run with containers"; the tests' cost in CI time).
      console.info(stdout.trim().split('\n').at(-1));
      return { built: true as const };
    },
    (e: { code?: number | string; stdout?: string; stderr?: string; message: string }) => {
      const output = `${e.stdout ?? ''}${e.stderr || e.message}`.trim().slice(-4000);
      if (e.code === 3) return { unavailable: output };
      throw new Error(`podman build failed (${e.code}):\n${output}`);
    },
  );
  return image;
}

export interface Container {
  name: string;
  logs(): Promise<string>;
  /** Runs a command in the container and answers its output. */
  exec(command: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Sends the signal to the container's PID 1. */
  kill(signal: string): Promise<void>;
  /** Waits until the container exits and answers its exit code. */
  exited(timeoutMs: number): Promise<number>;
  remove(): Promise<void>;
}

/**
 * Starts the image on the host's network (each container with its own ports, as separate machines would be), with its
 * entrypoint and its data volume, and only the given environment on top of the image's own.
 */
export async function startContainer(name: string, env: Record<string, string>): Promise<Container> {
  await podman(['rm', '-f', '-v', name]);
  const args = ['run', '-d', '--name', name, '--network', 'host', ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), IMAGE];
  const r = await podman(args, 120_000);
  if (r.code !== 0) throw new Error(`podman run ${name} failed: ${r.stderr}`);
  return {
    name,
    logs: async () => {
      const l = await podman(['logs', name]);
      return l.stdout + l.stderr;
    },
    exec: (command) => podman(['exec', name, ...command]),
    kill: async (signal) => {
      const k = await podman(['kill', '--signal', signal, name]);
      if (k.code !== 0) throw new Error(`podman kill ${name}: ${k.stderr}`);
    },
    exited: async (timeoutMs) => {
      const w = await podman(['wait', name], timeoutMs);
      if (w.code !== 0) throw new Error(`${name} did not exit within ${timeoutMs} ms: ${w.stderr}`);
      return Number(w.stdout.trim());
    },
    remove: async () => void (await podman(['rm', '-f', '-v', '-t', '0', name])),
  };
}

/** Waits until `url` answers 200; fails at once, with the container's logs, if the container has exited. */
export async function waitHealthy(container: Container, url: string, timeoutMs = 180_000): Promise<void> {
  await until(
    async () => {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', container.name]);
      if (state.stdout.trim() === 'exited') throw new Error(`${container.name} exited:\n${await container.logs()}`);
      return fetch(url).then(
        (r) => r.status,
        () => 0,
      );
    },
    (status) => status === 200,
    { timeoutMs, everyMs: 500, what: url },
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${container.name}'s logs:\n${await container.logs()}`);
  });
}
