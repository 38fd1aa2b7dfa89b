import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Logger } from 'pino';
import { ffmpegPath } from '../src/media/ffmpeg.ts';
import { createRestreamDestination, type RestreamDestination, type RtmpIngest } from '../src/media/live/index.ts';

/**
 * Restream CPU: a 720p30 4 Mb/s input on the ingest, copied (`-c copy`, the supervisor's own command) to 0, 1 and 3
 * local RTMP listeners that discard what they get. Reported per destination: the restream ffmpeg's CPU, and this
 * process's extra CPU (the ingest relays the input to one more local player per destination). Listeners not counted.
 */
export async function restreamCpu(ingest: RtmpIngest, channelId: string, seconds: number, log: Logger): Promise<void> {
  const url = ingest.inputUrl(channelId);
  if (!url) throw new Error('the bench encoder is not publishing');
  let baseline: number | undefined;
  for (const n of [0, 1, 3]) {
    const listeners: ChildProcess[] = [];
    const dests: RestreamDestination[] = [];
    const ports: number[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const port = await freePort();
        ports.push(port);
        listeners.push(
          spawn(
            ffmpegPath(),
            ['-hide_banner', '-nostdin', '-loglevel', 'error', '-listen', '1', '-i', `rtmp://127.0.0.1:${port}/live`, '-c', 'copy', '-f', 'null', '-'],
            { stdio: 'ignore' },
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 500));
      for (const port of ports) {
        const d = createRestreamDestination({
          url: `rtmp://127.0.0.1:${port}/live`,
          streamKey: 'bench',
          allowPrivate: true,
          log,
          onState: () => {},
          onEvent: () => {},
        });
        d.setSource({ url });
        dests.push(d);
      }
      await new Promise((r) => setTimeout(r, 3000));
      const pids = () => restreamPids(ports);
      const f0 = cpuSeconds(pids());
      const n0 = process.cpuUsage();
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const wall = (Date.now() - t0) / 1000;
      const ffmpeg = (cpuSeconds(pids()) - f0) / wall;
      const nu = process.cpuUsage(n0);
      const node = (nu.user + nu.system) / 1e6 / wall;
      const active = dests.filter((d) => d.state().status === 'Active').length;
      if (n === 0) {
        baseline = node;
        console.log(`restream: 0 destinations: this process (ingest, packager) ${(node * 100).toFixed(1)}% of a core`);
      } else {
        console.log(
          `restream: ${n} destination(s), ${active} Active: restream ffmpeg ${((ffmpeg / n) * 100).toFixed(2)}% of a core per destination; ` +
            `this process (ingest relaying to ${n} more player(s)) ${(node * 100).toFixed(1)}% of a core (${((baseline ?? 0) * 100).toFixed(1)}% with none)`,
        );
      }
    } finally {
      await Promise.all(dests.map((d) => d.stop()));
      for (const l of listeners) l.kill('SIGKILL');
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The restream ffmpeg processes (their output names a bench listener's port), not the listeners. */
function restreamPids(ports: number[]): number[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('no_duration_filesize') && ports.some((p) => l.includes(`127.0.0.1:${p}/live/`)))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100;
}
