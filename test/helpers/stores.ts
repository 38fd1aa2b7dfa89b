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

afterAll(async () => {
  if (swift) await (await swift).stop();
});

/** `describe` once per database and store: PGlite and PostgreSQL (when TEST_DATABASE_URL is set), fs and S3. */
export function describeEachDbAndStore(name: string, fn: (db: DbKind, store: StoreKind) => void): void {
  for (const store of STORES) for (const db of DATABASES) describe(`${name} [${db}, ${store}]`, () => fn(db, store));
}
