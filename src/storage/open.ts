import type { Config } from '../config.ts';
import { FsObjectStore } from './fsStore.ts';
import type { ObjectStore } from './objectStore.ts';
import { resolveSigningSecret, UrlSigner } from './signing.ts';

/**
 * The store MEDIAPLANE_STORAGE_URL names: S3 when it is an `s3://` URL, files under the data directory otherwise. The
 * AWS SDK is loaded only for S3: 3.5 MB of JavaScript heap the embedded store never uses, which every full garbage
 * collection would mark, and 0.2 s of every start.
 */
export async function openObjectStore(config: Config): Promise<ObjectStore> {
  if (config.storageUrl) {
    const { parseS3Url, S3ObjectStore } = await import('./s3Store.ts');
    return new S3ObjectStore(parseS3Url(config.storageUrl, config.awsRegion)).open();
  }
  const signer = new UrlSigner(resolveSigningSecret(config.dataDir, config.urlSigningSecret));
  const store = new FsObjectStore(config.dataDir, signer, () => config.publicUrl, { idleTimeoutMs: config.uploadIdleTimeoutSeconds * 1000 });
  if (config.role !== 'worker') store.startReceiving(); // this process serves the part URLs
  return store;
}
