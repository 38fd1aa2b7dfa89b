import { expect, it } from 'vitest';
import { codeLength, codeWord, decodeVotes, segmentVariants } from '../../src/media/watermark/code.ts';

const votesOf = (userNumber: number, bits: number, segments: number, strength = 1) =>
  segmentVariants(userNumber, bits, segments).map((v) => (v === 'A' ? strength : -strength));

it('reads back every user number of a short code from its votes', () => {
  for (let n = 0; n < 64; n++) expect(decodeVotes(votesOf(n, 6, 20), 6, 0.4).userNumber).toBe(n);
  expect(codeLength(16)).toBe(24);
  expect(codeWord(43210, 16).slice(0, 16).join('')).toBe((43210).toString(2).padStart(16, '0'));
});

it('survives a lost segment when the word repeats, and refuses a file shorter than one word', () => {
  const votes: (number | undefined)[] = votesOf(37, 6, 30);
  votes[3] = undefined;
  votes[20] = undefined;
  expect(decodeVotes(votes, 6, 0.4).userNumber).toBe(37);
  expect(decodeVotes(votesOf(37, 6, 13), 6, 0.4)).toMatchObject({ reason: 'the file is shorter than one code word' });
});

it('never guesses: a flipped bit, weak votes, no mark and one-sided votes are all refused', () => {
  const flipped = votesOf(37, 6, 14);
  flipped[2] = -flipped[2];
  expect(decodeVotes(flipped, 6, 0.4)).toMatchObject({ reason: 'the checksum does not match' });
  expect(decodeVotes(votesOf(37, 6, 14, 0.2), 6, 0.4)).toMatchObject({ reason: 'no bit pattern stands out' });
  expect(decodeVotes(new Array(14).fill(0.01), 6, 0.4).userNumber).toBeUndefined();
  // A re-framed copy: every vote pushed up by the same bias.
  const biased = votesOf(37, 6, 14).map((v) => v + 1.5);
  expect(decodeVotes(biased, 6, 0.4).userNumber).toBeUndefined();
  // All A and all B are no valid word (the CRC starts at 0xFF).
  expect(decodeVotes(new Array(14).fill(1), 6, 0.4).userNumber).toBeUndefined();
  expect(decodeVotes(new Array(14).fill(-1), 6, 0.4).userNumber).toBeUndefined();
});

it('refuses segments of several viewers interleaved (each bit voted both ways), and says how many bits disagree', () => {
  const ada = votesOf(37, 6, 28);
  const bob = votesOf(50, 6, 28);
  // The first word from Ada, the second from Bob: every bit where they differ is voted both ways.
  const mixed = [...ada.slice(0, 14), ...bob.slice(14)];
  const d = decodeVotes(mixed, 6, 0.4);
  expect(d.userNumber).toBeUndefined();
  expect(d.confidence).toEqual(expect.any(Number));
  // Ada's segments where Bob's agree with hers: still one viewer's word, read as hers.
  const agreeing = ada.map((v, k) => (k >= 14 && Math.sign(bob[k]) !== Math.sign(v) ? undefined : v));
  expect(decodeVotes(agreeing, 6, 0.4).userNumber).toBe(37);
  // Three words from Ada and one from Bob: the means still lean Ada's way (0.5), but Bob's segments vote against her
  // bits, and the word is refused rather than read (it could have been a third viewer's).
  const unevenly = [...votesOf(37, 6, 42), ...votesOf(50, 6, 56).slice(42)];
  expect(decodeVotes(unevenly, 6, 0.4)).toMatchObject({ reason: 'segments disagree' });
});
