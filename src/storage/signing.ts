import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded store's URL signatures: HMAC-SHA256 over the method, the object key and every parameter that
 * scopes the URL (upload id, part number, expiry), so a URL is good for exactly one operation until it expires.
 */
export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  sign(fields: readonly (string | number)[]): string {
    return createHmac('sha256', this.secret).update(fields.join('\n')).digest('base64url');
  }

  verify(fields: readonly (string | number)[], signature: string): boolean {
    const expected = Buffer.from(this.sign(fields));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** MEDIAPLANE_URL_SIGNING_SECRET when set; otherwise a random secret generated once and kept in the data directory. */
export function resolveSigningSecret(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv) return Buffer.from(fromEnv);
  const path = join(dataDir, 'url-signing-secret');
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(path, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (e) {
      // Another process created it first: use theirs.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  return Buffer.from(readFileSync(path, 'utf8').trim());
}
