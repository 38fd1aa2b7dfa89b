/**
 * The few ISO-BMFF facts the packager needs from ffmpeg's CMAF output: a track's timescale and codec string from the
 * init segment, a media segment's decode time (tfdt). Reading them from the files, not from ffmpeg's playlists, keeps
 * the DASH timeline equal to what the player finds in the media.
 */

interface Box {
  type: string;
  start: number; // of the payload
  end: number;
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'moof', 'traf', 'stsd', 'avc1', 'mp4a']);

function* boxes(buf: Buffer, start: number, end: number): Generator<Box> {
  let at = start;
  while (at + 8 <= end) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1 && at + 16 <= end) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) return;
    yield { type, start: at + header, end: at + size };
    at += size;
  }
}

/** Depth-first search for the first box of `type`, descending into the containers above. */
function find(buf: Buffer, type: string, start = 0, end = buf.length): Box | undefined {
  for (const box of boxes(buf, start, end)) {
    if (box.type === type) return box;
    if (CONTAINERS.has(box.type)) {
      // stsd has 8 bytes of version/count before its entries; sample entries have fixed fields before children.
      const skip = box.type === 'stsd' ? 8 : box.type === 'avc1' ? 78 : box.type === 'mp4a' ? 28 : 0;
      const found = find(buf, type, box.start + skip, box.end);
      if (found) return found;
    }
  }
  return undefined;
}

export interface InitInfo {
  timescale: number;
  /** RFC 6381 codec string: `avc1.64001f`, `mp4a.40.2`, `wvtt`. */
  codec: string;
}

export function readInit(init: Buffer): InitInfo {
  const mdhd = find(init, 'mdhd');
  if (!mdhd) throw new Error('init segment without mdhd');
  const version = init[mdhd.start]!;
  const timescale = init.readUInt32BE(mdhd.start + (version === 1 ? 20 : 12));
  const avcC = find(init, 'avcC');
  if (avcC) return { timescale, codec: `avc1.${init.subarray(avcC.start + 1, avcC.start + 4).toString('hex')}` };
  if (find(init, 'mp4a')) return { timescale, codec: 'mp4a.40.2' };
  // Live captions (wvtt.ts): WebVTT in ISO/IEC 14496-30.
  if (find(init, 'wvtt')) return { timescale, codec: 'wvtt' };
  throw new Error('init segment with an unknown codec');
}

/** The segment's baseMediaDecodeTime, in the track's timescale. */
export function readDecodeTime(segment: Buffer): number {
  const tfdt = find(segment, 'tfdt');
  if (!tfdt) throw new Error('media segment without tfdt');
  return segment[tfdt.start] === 1 ? Number(segment.readBigUInt64BE(tfdt.start + 4)) : segment.readUInt32BE(tfdt.start + 4);
}

/** What the packager needs of one CMAF chunk (a `moof` + `mdat`): where it starts, how long it lasts, and whether a player can start decoding at it. */
export interface ChunkInfo {
  decodeTime: number;
  /** In the track's timescale: the sum of its samples' durations. */
  duration: number;
  /** Its first sample is a sync sample (a key frame; every audio sample is one). */
  independent: boolean;
}

const NON_SYNC = 0x0001_0000;

export function readChunk(chunk: Buffer): ChunkInfo {
  const tfhd = find(chunk, 'tfhd');
  const trun = find(chunk, 'trun');
  if (!tfhd || !trun) throw new Error('chunk without tfhd or trun');
  const tfhdFlags = chunk.readUInt32BE(tfhd.start) & 0xffffff;
  let at = tfhd.start + 8; // version/flags, track_ID
  if (tfhdFlags & 0x1) at += 8;
  if (tfhdFlags & 0x2) at += 4;
  const defaultDuration = tfhdFlags & 0x8 ? chunk.readUInt32BE(at) : 0;
  if (tfhdFlags & 0x8) at += 4;
  if (tfhdFlags & 0x10) at += 4;
  const defaultFlags = tfhdFlags & 0x20 ? chunk.readUInt32BE(at) : 0;
  const flags = chunk.readUInt32BE(trun.start) & 0xffffff;
  const count = chunk.readUInt32BE(trun.start + 4);
  at = trun.start + 8;
  if (flags & 0x1) at += 4;
  let firstFlags: number | undefined;
  if (flags & 0x4) {
    firstFlags = chunk.readUInt32BE(at);
    at += 4;
  }
  let duration = 0;
  let sampleFlags: number | undefined;
  for (let i = 0; i < count; i++) {
    if (flags & 0x100) {
      duration += chunk.readUInt32BE(at);
      at += 4;
    } else duration += defaultDuration;
    if (flags & 0x200) at += 4;
    if (flags & 0x400) {
      if (i === 0) sampleFlags = chunk.readUInt32BE(at);
      at += 4;
    }
    if (flags & 0x800) at += 4;
  }
  const first = firstFlags ?? sampleFlags ?? defaultFlags;
  return { decodeTime: readDecodeTime(chunk), duration, independent: (first & NON_SYNC) === 0 };
}

/**
 * Moves a chunk on the channel's timeline, in place: ffmpeg's mp4 muxer starts every output at 0 and ignores
 * `-output_ts_offset` in its fragments' decode times, so the packager adds the run's offset itself.
 */
export function shiftDecodeTime(chunk: Buffer, delta: number): void {
  const tfdt = find(chunk, 'tfdt');
  if (!tfdt) throw new Error('chunk without tfdt');
  if (chunk[tfdt.start] === 1) chunk.writeBigUInt64BE(chunk.readBigUInt64BE(tfdt.start + 4) + BigInt(delta), tfdt.start + 4);
  else chunk.writeUInt32BE(chunk.readUInt32BE(tfdt.start + 4) + delta, tfdt.start + 4);
}
