import { afterAll, describe } from 'vitest';
import { DATABASES, type DbKind } from './platform.ts';
import { startSwift, type SwiftServer } from './swift.ts';

export type StoreKind = 'fs' | 's3';
/** Every storage test runs on the embedded store and on S3 (a local Swift with s3api). */
export const STORES: StoreKind[] = ['fs', 's3'];

let swift: Promise<SwiftServer> | undefined;
let buckets = 0;

/** The platform environment for a store: nothing for fs; for S3 a fresh bucket on this file's Swift (started once). */
export async function storeEnv(kind: StoreKind): Promise<Record<string, string>> {
  if (kind === 'fs') return {};
  swift ??= startSwift();
  const s = await swift;
  // The platform's S3 client reads the standard AWS variables, as it does in production.
  process.env.AWS_ACCESS_KEY_ID = s.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s.secretAccessKey;
  process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
  const bucket = `mediaplane-test-${process.pid}-${++buckets}`;
  return { MEDIAPLANE_STORAGE_URL: `s3://${bucket}?endpoint=${encodeURIComponent(s.endpoint)}&region=us-east-1&forcePathStyle=true` };
}

/** Stops the Swift a file's S3 runs started (test files may share a process: the next one starts its own). */
export async function stopSwift(): Promise<void> {
  const s = swift;
  swift = undefined;
  if (s) await (await s).stop();
}

/**
 * `describe` for every database and every store, paired rather than crossed: [PGlite, fs] and [PostgreSQL, S3] (with
 * one database, it runs on both stores). The database and the store do not meet below the service, so the pairs cover
 * each of them in half the runs of the cross product.
 */
export function describeEachDbAndStore(name: string, fn: (db: DbKind, store: StoreKind) => void): void {
  const runs = Math.max(DATABASES.length, STORES.length);
  for (let i = 0; i < runs; i++) {
    const db = DATABASES[i % DATABASES.length]!;
    const store = STORES[i % STORES.length]!;
    describe(`${name} [${db}, ${store}]`, () => {
      fn(db, store);
      if (store === 's3') afterAll(stopSwift);
    });
  }
}
