import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';

/**
 * Starts a media tool (ffmpeg, ffprobe, the recognizer) that dies with the platform's process. Killed with `kill -9`
 * (or by the out-of-memory killer), a process cannot stop its children, and a live channel's ffmpeg reads its own
 * input-loss colour: it would encode on for ever, writing segments nobody publishes, beside the process that takes
 * the channel over. On Linux the tool runs under util-linux's `setpriv --pdeathsig KILL`, which asks the kernel to
 * kill it when its parent dies and then becomes the tool itself (the same pid: signals, niceness and exit codes are
 * the tool's own). Elsewhere, or without setpriv, it runs as it is.
 */

const SETPRIV = process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) : undefined;

/** setpriv's exit code when it could not run the tool (as a shell's "command not found"). */
const NOT_STARTED = 127;

export type ToolProcess = ChildProcessByStdio<null, Readable, Readable>;

export function spawnTool(bin: string, args: string[]): ToolProcess {
  if (!SETPRIV) return spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Whether an exit means the tool itself never ran (not found, not executable): setpriv says so on its error output. */
export const toolNotStarted = (code: number | null, stderr: string): boolean =>
  !!SETPRIV && code === NOT_STARTED && /^setpriv: failed to execute/m.test(stderr);
