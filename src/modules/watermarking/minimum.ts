import { CHECKSUM_BITS, codeLength } from '../../media/watermark/code.ts';
import { ApiError } from '../../platform/errors.ts';

/**
 * The shortest asset worth preparing: one whole code word (the user number's bits and its CRC), one segment per bit.
 * Detection reads a user only from a capture that holds every bit of the word, so a shorter asset marks nothing a
 * capture could be traced by; refusing it at preparation is where the tenant can still act.
 */
export const minimumDurationSeconds = (s: { userNumberBits: number; segmentDuration: number }) => codeLength(s.userNumberBits) * s.segmentDuration;

/** The refusal, naming the minimum and the settings that set it (both can be lowered in PATCH /watermarking/v1/settings). */
export function tooShort(what: string, durationMs: number, s: { userNumberBits: number; segmentDuration: number }): ApiError {
  const minimum = minimumDurationSeconds(s);
  return new ApiError(
    400,
    'watermarking_asset_too_short',
    `${what} is ${(durationMs / 1000).toFixed(1)} s long; with this tenant's watermarking settings an asset (and a capture to ` +
      `detect) must be at least ${minimum} s: ${s.userNumberBits} user number bits + ${CHECKSUM_BITS} CRC bits, one ` +
      `${s.segmentDuration} s segment each. Use a longer asset, or lower userNumberBits or segmentDuration with PATCH /watermarking/v1/settings.`,
  );
}
