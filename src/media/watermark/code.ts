/**
 * How a user number is spelled across segments: the number's bits (most significant first) followed by a CRC-8 of
 * them, repeated cyclically over the whole asset. Segment k carries bit k mod codeLength: 0 is variant A, 1 is B.
 * A lost or cut segment removes one vote of one bit; every later cycle votes again, and the CRC refuses a word with
 * a wrong bit instead of naming the wrong user.
 */
export const CHECKSUM_BITS = 8;

/** CRC-8 (polynomial 0x07) over a bit string, initial value 0xFF so that an all-A or all-B sequence is no valid word. */
export function crc8Bits(bits: readonly number[]): number[] {
  let crc = 0xff;
  for (const bit of bits) {
    const top = ((crc >> 7) & 1) ^ bit;
    crc = (crc << 1) & 0xff;
    if (top) crc ^= 0x07;
  }
  return Array.from({ length: CHECKSUM_BITS }, (_, i) => (crc >> (CHECKSUM_BITS - 1 - i)) & 1);
}

export const codeLength = (userNumberBits: number): number => userNumberBits + CHECKSUM_BITS;

/** The code word of a user number: its bits then their CRC. */
export function codeWord(userNumber: number, userNumberBits: number): number[] {
  const bits = Array.from({ length: userNumberBits }, (_, i) => Math.floor(userNumber / 2 ** (userNumberBits - 1 - i)) % 2);
  return [...bits, ...crc8Bits(bits)];
}

/** The variant of every segment for a user: 'A' or 'B' per segment index. */
export function segmentVariants(userNumber: number, userNumberBits: number, segmentCount: number): ('A' | 'B')[] {
  const word = codeWord(userNumber, userNumberBits);
  return Array.from({ length: segmentCount }, (_, k) => (word[k % word.length] ? 'B' : 'A'));
}

/**
 * Reads a user number back from soft votes per segment (positive: looks like A, negative: like B, in units of the
 * mark's full strength; undefined: the segment is not in the file). Answers undefined unless every bit of the word
 * was seen, every bit is clearly one side (|mean vote| >= minConfidence) and the CRC holds: never a guess.
 */
export function decodeVotes(votes: readonly (number | undefined)[], userNumberBits: number, minConfidence: number): Decoded {
  const length = codeLength(userNumberBits);
  const sums = new Array<number>(length).fill(0);
  const counts = new Array<number>(length).fill(0);
  const perBit: number[][] = Array.from({ length }, () => []);
  votes.forEach((v, k) => {
    if (v === undefined) return;
    sums[k % length] += v;
    counts[k % length]++;
    perBit[k % length].push(v);
  });
  const means = sums.map((s, i) => (counts[i] ? s / counts[i] : 0));
  const unseen = counts.flatMap((c, i) => (c ? [] : [i]));
  if (unseen.length) return { confidence: 0, reason: 'the file is shorter than one code word', unseen, bitsSeen: length - unseen.length, length };
  const confidence = Math.min(...means.map(Math.abs));
  if (confidence < minConfidence)
    return { confidence, reason: 'no bit pattern stands out', weakBits: means.filter((m) => Math.abs(m) < minConfidence).length, length };
  const bits = means.map((m) => (m > 0 ? 0 : 1));
  // A clean read is symmetric: A bits near +s, B bits near -s. A copy whose pictures no longer line up with the
  // reference (cropped, re-framed) adds the same bias to every vote; such a word is refused even if its CRC held.
  const side = (bit: number) => means.filter((_, i) => bits[i] === bit).map(Math.abs);
  const [a, b] = [side(0), side(1)].map((v) => v.reduce((x, y) => x + y, 0) / (v.length || 1));
  if (a && b && Math.max(a, b) > 2 * Math.min(a, b)) return { confidence, reason: 'the votes lean to one side (a re-framed copy?)', length };
  // Collusion: segments of several viewers interleaved spell each bit one way in some repetitions of the word and the
  // other way in others. One viewer's copy never does (a segment reads clearly its own side or nothing), so a bit
  // with a clear vote against it refuses the word: it could spell a viewer who took no part.
  const contested = perBit.filter((vs, i) => vs.some((v) => (bits[i] ? v >= minConfidence : v <= -minConfidence))).length;
  if (contested) return { confidence, reason: 'segments disagree', contested, length };
  const payload = bits.slice(0, userNumberBits);
  const crc = crc8Bits(payload);
  if (crc.some((b, i) => b !== bits[userNumberBits + i])) return { confidence, reason: 'the checksum does not match', length };
  return { confidence, userNumber: payload.reduce<number>((n, b) => n * 2 + b, 0), length };
}

export type Decoded =
  | { confidence: number; userNumber: number; length: number; reason?: undefined }
  | { confidence: number; userNumber?: undefined; length: number; reason: 'the file is shorter than one code word'; unseen: number[]; bitsSeen: number }
  | { confidence: number; userNumber?: undefined; length: number; reason: 'no bit pattern stands out'; weakBits: number }
  | { confidence: number; userNumber?: undefined; length: number; reason: 'the votes lean to one side (a re-framed copy?)' | 'the checksum does not match' }
  | { confidence: number; userNumber?: undefined; length: number; reason: 'segments disagree'; contested: number };

/** Why a word was refused, in words, with the figures (the file's coverage is the caller's to say). */
export function refusal(d: Decoded, minConfidence: number): string {
  if (d.reason === 'the file is shorter than one code word')
    return `${d.bitsSeen} of the ${d.length} bits of the code word were read (bits ${d.unseen.join(', ')} in no segment read)`;
  if (d.reason === 'no bit pattern stands out')
    return `no bit pattern stands out: ${d.weakBits} of ${d.length} bits are weaker than ${minConfidence} (weakest ${d.confidence.toFixed(2)})`;
  if (d.reason === 'segments disagree') return `segments disagree on ${d.contested} of ${d.length} bits (copies of several viewers combined?)`;
  return d.reason ?? '';
}
