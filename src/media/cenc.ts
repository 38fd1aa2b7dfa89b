import { createCipheriv, randomBytes } from 'node:crypto';
import { child, container, fullBox, parseBoxes, path, serializeBoxes, uuidBytes, type Box } from './mp4boxes.ts';

/**
 * Common Encryption (ISO/IEC 23001-7) of clear fragmented MP4, in our own step because Debian's ffmpeg 5.1 writes no
 * per-sample encryption data (`senc`/`saiz`/`saio`) in fragmented MP4. `cenc`: AES-128-CTR, an 8-byte IV per
 * sample. `cbcs`: AES-128-CBC with one constant IV, video in the 1:9 pattern (one block encrypted, nine clear).
 * Video (H.264) is encrypted per NAL unit with a subsample map (length prefix, NAL header and the start of the slice
 * header stay clear; parameter sets and SEI stay clear); audio samples are encrypted whole.
 */
export type CencScheme = 'cenc' | 'cbcs';

export interface CencKey {
  /** 16 bytes. */
  key: Buffer;
  /** 16 bytes: the key id (`default_KID`). */
  keyId: Buffer;
  scheme: CencScheme;
  /** `cbcs`: the constant IV (16 bytes); ignored for `cenc`. */
  constantIv?: Buffer;
  /** Full `pssh` boxes (serialised) to put in the initialisation segment. */
  pssh: Buffer[];
  /** Audio tracks' own key (drmKeyMode `AudioVideoKeys`); absent: audio is encrypted with `key` too. */
  audio?: { key: Buffer; keyId: Buffer; constantIv?: Buffer };
}

/** The key, key id and IV that tracks of this kind are encrypted with. */
function keyOf(k: CencKey, kind: 'video' | 'audio'): CencKey {
  return kind === 'audio' && k.audio ? { ...k, ...k.audio } : k;
}

interface TrackInfo {
  kind: 'video' | 'audio';
  /** H.264 NAL length prefix size (video). */
  nalLengthSize: number;
  defaultSampleSize: number;
}

/** The tracks of an initialisation segment, by track id: what the fragments' encryption needs to know. */
export type InitTracks = Map<number, TrackInfo>;

const VISUAL_ENTRY_FIELDS = 78;
const AUDIO_ENTRY_FIELDS = 28;
const VIDEO_ENTRIES = new Set(['avc1', 'avc3']);
const AUDIO_ENTRIES = new Set(['mp4a']);
const CLEAR_LEAD = 32;

function tenc(all: CencKey, kind: 'video' | 'audio'): Box {
  const k = keyOf(all, kind);
  if (k.scheme === 'cenc') return fullBox('tenc', 0, 0, Buffer.concat([Buffer.from([0, 0, 1, 8]), k.keyId]));
  const pattern = kind === 'video' ? (1 << 4) | 9 : 0;
  const iv = k.constantIv!;
  return fullBox('tenc', 1, 0, Buffer.concat([Buffer.from([0, pattern, 1, 0]), k.keyId, Buffer.from([iv.length]), iv]));
}

function sinf(original: string, k: CencKey, kind: 'video' | 'audio'): Box {
  const schm = Buffer.alloc(8);
  schm.write(k.scheme, 0, 'latin1');
  schm.writeUInt32BE(0x00010000, 4);
  return container('sinf', [{ type: 'frma', data: Buffer.from(original, 'latin1') }, fullBox('schm', 0, 0, schm), container('schi', [tenc(k, kind)])]);
}

/** `pssh` box of version 1 (with key ids) or 0 (`data` only). */
export function psshBox(systemId: string, keyIds: Buffer[], data: Buffer = Buffer.alloc(0)): Buffer {
  const kids = keyIds.length > 0 ? Buffer.concat([u32(keyIds.length), ...keyIds]) : Buffer.alloc(0);
  return serializeBoxes([fullBox('pssh', keyIds.length > 0 ? 1 : 0, 0, Buffer.concat([uuidBytes(systemId), kids, u32(data.length), data]))]);
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** Rewrites an initialisation segment: sample entries become `encv`/`enca` with their `sinf`, `pssh` boxes added. */
export function encryptInit(init: Buffer, k: CencKey): { init: Buffer; tracks: InitTracks } {
  const top = parseBoxes(init);
  const moov = top.find((b) => b.type === 'moov');
  if (!moov) throw new Error('CENC: the initialisation segment has no moov');
  const tracks: InitTracks = new Map();
  const trex = new Map<number, number>();
  for (const t of path(moov, 'mvex')?.children?.filter((c) => c.type === 'trex') ?? []) trex.set(t.data.readUInt32BE(4), t.data.readUInt32BE(16));
  for (const trak of moov.children!.filter((c) => c.type === 'trak')) {
    const tkhd = child(trak, 'tkhd')!;
    const trackId = tkhd.data.readUInt32BE(tkhd.data[0] === 1 ? 20 : 12);
    const stsd = path(trak, 'mdia', 'minf', 'stbl', 'stsd');
    if (!stsd?.children?.length) throw new Error(`CENC: track ${trackId} has no sample description`);
    let kind: 'video' | 'audio' | undefined;
    let nalLengthSize = 4;
    stsd.children = stsd.children.map((entry) => {
      if (VIDEO_ENTRIES.has(entry.type)) {
        kind = 'video';
        const avcC = parseBoxes(entry.data, VISUAL_ENTRY_FIELDS).find((b) => b.type === 'avcC');
        if (!avcC) throw new Error('CENC: H.264 track without avcC');
        nalLengthSize = (avcC.data[4] & 3) + 1;
      } else if (AUDIO_ENTRIES.has(entry.type)) {
        kind = 'audio';
        parseBoxes(entry.data, AUDIO_ENTRY_FIELDS); // checks the layout we append to
      } else throw new Error(`CENC: cannot encrypt ${entry.type} tracks (H.264 and AAC only)`);
      const protectedEntry = serializeBoxes([sinf(entry.type, k, kind)]);
      return { type: kind === 'video' ? 'encv' : 'enca', data: Buffer.concat([entry.data, protectedEntry]) };
    });
    tracks.set(trackId, { kind: kind!, nalLengthSize, defaultSampleSize: trex.get(trackId) ?? 0 });
  }
  moov.children!.push(...k.pssh.flatMap((p) => parseBoxes(p)));
  return { init: serializeBoxes(top), tracks };
}

type Subsample = [clear: number, protectedBytes: number];

/** The subsample map of one H.264 sample (length-prefixed NAL units): slice data protected in whole 16-byte blocks. */
function videoSubsamples(sample: Buffer, nalLengthSize: number): Subsample[] {
  const out: Subsample[] = [];
  let clear = 0;
  const push = (c: number, p: number) => {
    while (c > 0xffff) {
      out.push([0xffff, 0]);
      c -= 0xffff;
    }
    out.push([c, p]);
  };
  let pos = 0;
  while (pos < sample.length) {
    if (pos + nalLengthSize > sample.length) throw new Error('CENC: truncated NAL length');
    const size = sample.readUIntBE(pos, nalLengthSize);
    const total = nalLengthSize + size;
    if (pos + total > sample.length) throw new Error('CENC: NAL unit overruns its sample');
    const type = sample[pos + nalLengthSize] & 0x1f;
    const slice = type >= 1 && type <= 5;
    const protectedBytes = slice && size > CLEAR_LEAD + 16 ? Math.floor((size - CLEAR_LEAD) / 16) * 16 : 0;
    if (protectedBytes > 0) {
      push(clear + total - protectedBytes, protectedBytes);
      clear = 0;
    } else clear += total;
    pos += total;
  }
  if (clear > 0) push(clear, 0);
  return out;
}

/** Encrypts the protected ranges of one sample in place. */
function encryptSample(sample: Buffer, subsamples: Subsample[] | undefined, all: CencKey, iv: Buffer, kind: 'video' | 'audio'): void {
  const k = keyOf(all, kind);
  const ranges: [number, number][] = [];
  if (!subsamples) ranges.push([0, sample.length]);
  else {
    let pos = 0;
    for (const [c, p] of subsamples) {
      pos += c;
      if (p > 0) ranges.push([pos, pos + p]);
      pos += p;
    }
  }
  if (k.scheme === 'cenc') {
    // One key stream across the sample's protected ranges, as if they were contiguous.
    const cipher = createCipheriv('aes-128-ctr', k.key, Buffer.concat([iv, Buffer.alloc(8)]));
    for (const [a, b] of ranges) cipher.update(sample.subarray(a, b)).copy(sample, a);
    return;
  }
  // cbcs: each range starts again from the constant IV; the pattern encrypts 1 block of 10 (video) or every block.
  for (const [a, b] of ranges) {
    const cipher = createCipheriv('aes-128-cbc', k.key, k.constantIv!).setAutoPadding(false);
    const blocks = Math.floor((b - a) / 16);
    for (let i = 0; i < blocks; i++) {
      if (kind === 'video' && i % 10 !== 0) continue;
      const at = a + i * 16;
      cipher.update(sample.subarray(at, at + 16)).copy(sample, at);
    }
  }
}

/** Encrypts a media segment (any number of `moof`+`mdat` pairs; `styp`, `sidx` pass through) in place of a copy. */
export function encryptSegment(segment: Buffer, tracks: InitTracks, k: CencKey): Buffer {
  const buf = Buffer.from(segment);
  const top = parseBoxes(buf);
  const offsets = new Map<Box, number>();
  serializeBoxes(top, offsets);
  const out: Box[] = [];
  /** How much each moof (by its original offset) grew, for the `sidx` that indexes it. */
  const growth = new Map<number, number>();
  for (const box of top) {
    if (box.type !== 'moof') {
      out.push(box);
      continue;
    }
    const moofStart = offsets.get(box)!;
    const oldSize = serializeBoxes([box]).length;
    const added: { traf: Box; saio: Box; senc: Box }[] = [];
    for (const traf of box.children!.filter((c) => c.type === 'traf')) {
      const tfhd = child(traf, 'tfhd')!;
      const flags = tfhd.data.readUInt32BE(0) & 0xffffff;
      const trackId = tfhd.data.readUInt32BE(4);
      const track = tracks.get(trackId);
      if (!track) throw new Error(`CENC: fragment of unknown track ${trackId}`);
      if (flags & 0x1) throw new Error('CENC: tfhd base-data-offset is not supported');
      let at = 8;
      if (flags & 0x2) at += 4;
      if (flags & 0x8) at += 4;
      const defaultSize = flags & 0x10 ? tfhd.data.readUInt32BE(at) : track.defaultSampleSize;
      const sencEntries: Buffer[] = [];
      const infoSizes: number[] = [];
      let dataPos = moofStart;
      for (const trun of traf.children!.filter((c) => c.type === 'trun')) {
        const tf = trun.data.readUInt32BE(0) & 0xffffff;
        const count = trun.data.readUInt32BE(4);
        let p = 8;
        if (tf & 0x1) {
          dataPos = moofStart + trun.data.readInt32BE(p);
          p += 4;
        }
        if (tf & 0x4) p += 4;
        for (let i = 0; i < count; i++) {
          if (tf & 0x100) p += 4;
          const size = tf & 0x200 ? trun.data.readUInt32BE(p) : defaultSize;
          if (tf & 0x200) p += 4;
          if (tf & 0x400) p += 4;
          if (tf & 0x800) p += 4;
          if (dataPos + size > buf.length) throw new Error('CENC: sample data beyond the segment');
          const sample = buf.subarray(dataPos, dataPos + size);
          const subsamples = track.kind === 'video' ? videoSubsamples(sample, track.nalLengthSize) : undefined;
          const iv = k.scheme === 'cenc' ? randomBytes(8) : Buffer.alloc(0);
          encryptSample(sample, subsamples, k, iv, track.kind);
          const sub = subsamples ? Buffer.concat([u16(subsamples.length), ...subsamples.map(([c, pr]) => Buffer.concat([u16(c), u32(pr)]))]) : Buffer.alloc(0);
          sencEntries.push(iv, sub);
          infoSizes.push(iv.length + sub.length);
          dataPos += size;
        }
      }
      const sampleCount = infoSizes.length;
      const senc = fullBox('senc', 0, track.kind === 'video' ? 0x2 : 0, Buffer.concat([u32(sampleCount), ...sencEntries]));
      const uniform = infoSizes.every((s) => s === infoSizes[0]);
      const saiz = fullBox(
        'saiz',
        0,
        0,
        Buffer.concat([Buffer.from([uniform ? (infoSizes[0] ?? 0) : 0]), u32(sampleCount), uniform ? Buffer.alloc(0) : Buffer.from(infoSizes)]),
      );
      const saio = fullBox('saio', 0, 0, Buffer.concat([u32(1), u32(0)]));
      // Nothing per sample (cbcs audio: constant IV, whole samples): tenc says it all, saiz could not say "0 bytes".
      if (infoSizes.every((s) => s === 0)) traf.children!.push(senc);
      else {
        traf.children!.push(saiz, saio, senc);
        added.push({ traf, saio, senc });
      }
    }
    // The moof grew: sample data offsets (relative to the moof) move by as much.
    const delta = serializeBoxes([box]).length - oldSize;
    growth.set(moofStart, delta);
    for (const trun of box.children!.filter((c) => c.type === 'traf').flatMap((t) => t.children!.filter((c) => c.type === 'trun'))) {
      if ((trun.data.readUInt32BE(0) & 0x1) !== 0) {
        const data = Buffer.from(trun.data);
        data.writeInt32BE(data.readInt32BE(8) + delta, 8);
        trun.data = data;
      }
    }
    // saio points at the first sample's entry in senc (after its full box header and sample count), from the moof.
    const inner = new Map<Box, number>();
    serializeBoxes([box], inner);
    for (const a of added) a.saio.data.writeUInt32BE(inner.get(a.senc)! + 8 + 4 + 4, 8);
    out.push(box);
  }
  for (const box of out.filter((b) => b.type === 'sidx')) box.data = fixSidx(box, offsets.get(box)!, growth);
  return serializeBoxes(out);
}

/** A `sidx` whose subsegment sizes include the moofs' growth (each reference covers a byte range of the original). */
function fixSidx(sidx: Box, start: number, growth: Map<number, number>): Buffer {
  const data = Buffer.from(sidx.data);
  const v1 = data[0] === 1;
  let at = 12 + (v1 ? 8 : 4);
  let pos = start + 8 + data.length + (v1 ? Number(data.readBigUInt64BE(at)) : data.readUInt32BE(at));
  at += (v1 ? 8 : 4) + 2;
  const count = data.readUInt16BE(at);
  at += 2;
  for (let i = 0; i < count; i++, at += 12) {
    const word = data.readUInt32BE(at);
    const size = word & 0x7fffffff;
    let extra = 0;
    for (const [moof, d] of growth) if (moof >= pos && moof < pos + size) extra += d;
    data.writeUInt32BE(((word & 0x80000000) | (size + extra)) >>> 0, at);
    pos += size;
  }
  return data;
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
