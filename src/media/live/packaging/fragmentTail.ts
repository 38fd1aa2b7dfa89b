import { open, type FileHandle } from 'node:fs/promises';

/**
 * Follows a fragmented MP4 file while ffmpeg writes it (`-movflags +empty_moov+default_base_moof`, flushed after
 * every packet): the init segment (`ftyp` + `moov`) once, then each CMAF chunk (`moof` + `mdat`) as soon as its last
 * byte is on disk. A box still being written is left for the next read.
 */
export class FragmentTail {
  private handle: FileHandle | undefined;
  private offset = 0;
  private pending = Buffer.alloc(0);
  private initParts: Buffer[] = [];
  private moof: Buffer | undefined;
  private closed = false;
  init: Buffer | undefined;

  constructor(private readonly file: string) {}

  /** New complete chunks since the last call (the init segment is in `init` once read). */
  async read(): Promise<Buffer[]> {
    if (this.closed) return [];
    if (!this.handle) {
      try {
        this.handle = await open(this.file, 'r');
      } catch {
        return []; // ffmpeg has not created it yet
      }
    }
    const fresh: Buffer[] = [];
    for (;;) {
      const buf = Buffer.allocUnsafe(256 * 1024);
      const { bytesRead } = await this.handle.read(buf, 0, buf.length, this.offset);
      if (bytesRead === 0) break;
      this.offset += bytesRead;
      fresh.push(buf.subarray(0, bytesRead));
    }
    if (fresh.length > 0) this.pending = Buffer.concat([this.pending, ...fresh]);
    const chunks: Buffer[] = [];
    let at = 0;
    while (at + 8 <= this.pending.length) {
      let size = this.pending.readUInt32BE(at);
      if (size === 1) {
        if (at + 16 > this.pending.length) break;
        size = Number(this.pending.readBigUInt64BE(at + 8));
      }
      if (size < 8) throw new Error(`damaged fragmented MP4 output (a box of ${size} bytes)`);
      if (at + size > this.pending.length) break;
      const type = this.pending.toString('latin1', at + 4, at + 8);
      const box = Buffer.from(this.pending.subarray(at, at + size));
      at += size;
      if (type === 'ftyp') this.initParts = [box];
      else if (type === 'moov') {
        this.init = Buffer.concat([...this.initParts, box]);
        this.initParts = [];
      } else if (type === 'moof') this.moof = box;
      else if (type === 'mdat' && this.moof) {
        chunks.push(Buffer.concat([this.moof, box]));
        this.moof = undefined;
      }
      // Anything else (styp, sidx, mfra) is not needed: each chunk carries its own timing.
    }
    this.pending = this.pending.subarray(at);
    return chunks;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.handle?.close().catch(() => {});
    this.handle = undefined;
  }
}
