import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The DRM master key (32 bytes) and what is derived from it: the key that seals content keys at rest (AES-256-GCM)
 * and the key that signs DRM tokens (HS256). From MEDIAPLANE_DRM_MASTER_KEY (base64 or hex of 32 bytes); unset, one
 * is generated once and kept in the data directory (`drm-master-key`, mode 0600), which suits the one-process
 * embedded mode only: every api and worker process of an installation must share the same key.
 */
export interface DrmSecrets {
  sealKey: Buffer;
  tokenKey: Uint8Array;
}

export function parseMasterKey(value: string): Buffer {
  const v = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (key.length !== 32) throw new Error('MEDIAPLANE_DRM_MASTER_KEY must be 32 bytes, written as 64 hex digits or base64');
  return key;
}

function masterKey(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv) return parseMasterKey(fromEnv);
  const path = join(dataDir, 'drm-master-key');
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (e) {
      // Another process created it first: use theirs.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  return parseMasterKey(readFileSync(path, 'utf8'));
}

const cache = new Map<string, DrmSecrets>();

export function drmSecrets(dataDir: string, fromEnv: string | undefined): DrmSecrets {
  const id = `${dataDir}\0${fromEnv ?? ''}`;
  let s = cache.get(id);
  if (!s) {
    const master = masterKey(dataDir, fromEnv);
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
    s = { sealKey: derive('mediaplane drm content keys'), tokenKey: new Uint8Array(derive('mediaplane drm tokens')) };
    cache.set(id, s);
  }
  return s;
}

/** Seals a content key; the key id is authenticated with it, so a sealed key cannot be moved to another key id. */
export function sealKey(s: DrmSecrets, keyId: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', s.sealKey, iv).setAAD(Buffer.from(keyId));
  const ct = Buffer.concat([cipher.update(key), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
}

export function openKey(s: DrmSecrets, keyId: string, sealed: string): Buffer {
  const raw = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', s.sealKey, raw.subarray(0, 12)).setAAD(Buffer.from(keyId));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}
