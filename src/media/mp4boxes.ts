/**
 * ISO BMFF (MP4) boxes as a tree, enough to rewrite fragmented MP4: a box is its type and either its payload or, for
 * the container types below, its children. Serialising recomputes every size, so a box may grow or shrink.
 */
export interface Box {
  type: string;
  /** The payload after the 8-byte header (for containers: the bytes before the first child, e.g. a full box header). */
  data: Buffer;
  children?: Box[];
}

/** Boxes whose payload is only child boxes; `stsd` is a full box with an entry count before its children. */
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'mvex', 'moof', 'traf', 'edts', 'dinf', 'sinf', 'schi', 'stsd']);
const PREFIX: Record<string, number> = { stsd: 8 };

export function parseBoxes(buf: Buffer, start = 0, end = buf.length): Box[] {
  const boxes: Box[] = [];
  let pos = start;
  while (pos + 8 <= end) {
    let size = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buf.readBigUInt64BE(pos + 8));
      header = 16;
    } else if (size === 0) size = end - pos;
    if (size < header || pos + size > end) throw new Error(`MP4: box ${JSON.stringify(type)} at ${pos} overruns its parent`);
    const payloadStart = pos + header;
    if (CONTAINERS.has(type)) {
      const prefix = PREFIX[type] ?? 0;
      boxes.push({ type, data: buf.subarray(payloadStart, payloadStart + prefix), children: parseBoxes(buf, payloadStart + prefix, pos + size) });
    } else {
      boxes.push({ type, data: buf.subarray(payloadStart, pos + size) });
    }
    pos += size;
  }
  if (pos !== end) throw new Error(`MP4: ${end - pos} stray bytes at ${pos}`);
  return boxes;
}

export const boxSize = (b: Box): number => {
  const inner = b.data.length + (b.children ?? []).reduce((n, c) => n + boxSize(c), 0);
  return inner + 8 > 0xffffffff ? inner + 16 : inner + 8;
};

/** Writes boxes; `offsets` (if given) receives each box's start in the output. */
export function serializeBoxes(boxes: Box[], offsets?: Map<Box, number>): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  const write = (b: Box) => {
    offsets?.set(b, pos);
    const size = boxSize(b);
    const large = size > 0xffffffff;
    const header = Buffer.alloc(large ? 16 : 8);
    header.writeUInt32BE(large ? 1 : size, 0);
    header.write(b.type, 4, 'latin1');
    if (large) header.writeBigUInt64BE(BigInt(size), 8);
    parts.push(header, b.data);
    pos += header.length + b.data.length;
    for (const c of b.children ?? []) write(c);
  };
  for (const b of boxes) write(b);
  return Buffer.concat(parts);
}

export const child = (b: Box | undefined, type: string): Box | undefined => b?.children?.find((c) => c.type === type);
export const path = (b: Box | undefined, ...types: string[]): Box | undefined => types.reduce<Box | undefined>((at, t) => child(at, t), b);

/** A full box: version, flags, then `body`. */
export function fullBox(type: string, version: number, flags: number, body: Buffer): Box {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff));
  return { type, data: Buffer.concat([head, body]) };
}

export const container = (type: string, children: Box[]): Box => ({ type, data: Buffer.alloc(0), children });

/** A UUID (`1077efec-c0b2-...` or 32 hex digits) as its 16 bytes. */
export const uuidBytes = (id: string): Buffer => {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error(`not a UUID: ${id}`);
  return Buffer.from(hex, 'hex');
};
