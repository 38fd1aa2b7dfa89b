import { fullFormats } from 'ajv-formats/dist/formats.js';

/**
 * The years every date input must fall in, once its offset is applied: PostgreSQL has no year 0 (`0000-...` is out
 * of range), and from year 10000 on `toISOString()` writes `+010000-...`, which PostgreSQL cannot read.
 */
const FIRST_YEAR = 1;
const LAST_YEAR = 9999;

/** The instant `value` names, when JavaScript reads it and PostgreSQL can store it; otherwise undefined. */
export function storableDate(value: string): Date | undefined {
  const date = new Date(value);
  const year = date.getUTCFullYear(); // NaN for an Invalid Date (a leap second such as 23:59:60, an hour-only offset)
  return year >= FIRST_YEAR && year <= LAST_YEAR ? date : undefined;
}

// ajv-formats' own RFC 3339 check (real days of the month, hours up to 23): kept, then narrowed.
const rfc3339 = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;

/** The `date-time` format of every request schema: RFC 3339 that `new Date` reads, within years 0001–9999 UTC. */
export const isStorableDateTime = (value: string): boolean => rfc3339(value) && storableDate(value) !== undefined;
