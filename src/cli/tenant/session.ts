import { createClient, type Client } from '@mediaplane/sdk';
import { nodeFetch } from '@mediaplane/sdk/node';
import { tenantCliSettings } from '../../config.ts';
import { resolveCredentials } from './profiles.ts';

/** The options every tenant command takes. */
export interface TenantOptions {
  profile?: string;
  json?: boolean;
}

/** An SDK client with the credentials of `--profile` (or the default profile), the environment's overriding them. */
export function tenantClient(opts: TenantOptions): Client {
  const { url, tenantId, apiKey } = resolveCredentials(tenantCliSettings(), opts.profile);
  // node:http rather than Node's fetch: a command starts several hundred milliseconds of CPU sooner (BENCHMARKS.md).
  return createClient({ baseUrl: url, tenantId, apiKey, fetch: nodeFetch });
}
