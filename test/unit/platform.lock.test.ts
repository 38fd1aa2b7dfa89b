import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../../src/db/lock.ts';

describe('lockDataDir', () => {
  let dir: string;
  const lockFile = () => join(dir, 'mediaplane.lock');
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mediaplane-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes its pid and start time, refuses a second open in the same process, and releases', () => {
    const release = lockDataDir(dir);
    const [pid, started] = readFileSync(lockFile(), 'utf8').split(' ');
    expect(Number(pid)).toBe(process.pid);
    expect(started).toMatch(/^\d+$/);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    release();
    expect(existsSync(lockFile())).toBe(false);
    lockDataDir(dir)();
  });

  it('refuses while another live process holds it, naming that pid', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      writeFileSync(lockFile(), `${child.pid} ${started}`);
      expect(() => lockDataDir(dir)).toThrowError(`Data directory ${dir} is in use by another Mediaplane process (pid ${child.pid}).`);
      // An older lock format (pid only) is honoured too.
      writeFileSync(lockFile(), `${child.pid}`);
      expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('takes over the lock of a process that is gone', () => {
    writeFileSync(lockFile(), '999999999 123');
    const release = lockDataDir(dir);
    expect(readFileSync(lockFile(), 'utf8').split(' ')[0]).toBe(String(process.pid));
    release();
  });

  it('takes over a lock whose pid now belongs to another process (pid reused after a restart)', () => {
    // Our own pid with another start time: the lock of a previous container run that also had this pid.
    writeFileSync(lockFile(), `${process.pid} 1`);
    const release = lockDataDir(dir);
    expect(readFileSync(lockFile(), 'utf8')).not.toBe(`${process.pid} 1`);
    release();
    writeFileSync(lockFile(), `1 1`); // pid 1 runs, but did not start at tick 1
    lockDataDir(dir)();
  });
});
