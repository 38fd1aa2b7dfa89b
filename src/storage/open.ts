import type { Config } from '../config.ts';
import { FsObjectStore } from './fsStore.ts';
import type { ObjectStore } from './objectStore.ts';
import { parseS3Url, S3ObjectStore } from './s3Store.ts';
import { resolveSigningSecret, UrlSigner } from './signing.ts';

/** The store MEDIAPLANE_STORAGE_URL names: S3 when it is an `s3://` URL, files under the data directory otherwise. */
export async function openObjectStore(config: Config): Promise<ObjectStore> {
  if (config.storageUrl) return new S3ObjectStore(parseS3Url(config.storageUrl)).open();
  const signer = new UrlSigner(resolveSigningSecret(config.dataDir, config.urlSigningSecret));
  const store = new FsObjectStore(config.dataDir, signer, () => config.publicUrl);
  if (config.role !== 'worker') store.startReceiving(); // this process serves the part URLs
  return store;
}
