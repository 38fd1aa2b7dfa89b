import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {}

/** Lock files held by this process: a second open of the same directory in one process is refused too. */
const held = new Set<string>();

/**
 * When the process started, in clock ticks since boot (Linux, /proc/<pid>/stat field 22), or undefined elsewhere.
 * With the pid it names one process for good: after a restart a new process can get the old pid (a container's
 * server is often pid 1 every time), never the old pid and start time together.
 */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process that wrote this lock (`<pid> [<start time>]`) still runs. */
function ownerRuns(content: string): number | undefined {
  const [pidText, started] = content.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return undefined;
  if (started !== undefined) {
    const now = startTime(pid);
    if (now !== undefined && now !== started) return undefined;
  }
  return pid;
}

/** The pid of the running process that holds the data directory's lock, if one does. */
export function lockHolder(dataDir: string): number | undefined {
  try {
    return ownerRuns(readFileSync(join(dataDir, 'mediaplane.lock'), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * PGlite has no lock of its own: two processes on one data directory silently lose writes.
 * The lock file names its owner (pid and start time); a lock whose owner is gone (a crash, kill -9) is taken over.
 * Two processes taking over the same stale lock at the same instant is not guarded against.
 * Returns the release function.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'mediaplane.lock');
  if (held.has(path)) throw new DataDirLockedError(`Data directory ${dataDir} is already open in this process.`);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, [process.pid, startTime(process.pid)].filter((v) => v !== undefined).join(' '));
      closeSync(fd);
      held.add(path);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        held.delete(path);
        rmSync(path, { force: true });
        process.off('exit', release);
      };
      process.on('exit', release);
      return release;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let content: string;
      try {
        content = readFileSync(path, 'utf8');
      } catch {
        continue; // released between our open and read: try again
      }
      const pid = ownerRuns(content);
      if (pid !== undefined) {
        throw new DataDirLockedError(lockedMessage(dataDir, pid));
      }
      rmSync(path, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock data directory ${dataDir}`);
}

export function lockedMessage(dataDir: string, pid: number): string {
  return `Data directory ${dataDir} is in use by another Mediaplane process (pid ${pid}). ` + 'Stop it first, or set MEDIAPLANE_DATA_DIR to another directory.';
}
