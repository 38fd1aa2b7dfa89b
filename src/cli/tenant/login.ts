import { createClient } from '@mediaplane/sdk';
import { nodeFetch } from '@mediaplane/sdk/node';
import { tenantCliSettings } from '../../config.ts';
import { CliError, printJson } from './output.ts';
import { DEFAULT_PROFILE, saveProfile } from './profiles.ts';

export interface LoginOptions {
  url: string;
  tenantId: string;
  apiKey: string;
  profile?: string;
  json?: boolean;
}

/**
 * `mediaplane login`: checks the credentials against the platform (the tenant's status, which any role may read),
 * then stores them as a profile. The key is never printed back.
 */
export async function login(opts: LoginOptions): Promise<void> {
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    throw new CliError(`--url ${opts.url} is not a URL (e.g. https://media.example.org)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--url must be http or https, not ${url.protocol}`);
  const baseUrl = url.toString().replace(/\/+$/, '');
  const client = createClient({ baseUrl, tenantId: opts.tenantId, apiKey: opts.apiKey, fetch: nodeFetch });
  const tenant = await client.request('GET', '/core/v1/settings/tenant/{id}/status', undefined, { params: { id: opts.tenantId } });
  const settings = tenantCliSettings();
  const profile = opts.profile ?? settings.profile ?? DEFAULT_PROFILE;
  const path = saveProfile(settings, profile, { url: baseUrl, tenantId: opts.tenantId, apiKey: opts.apiKey });
  if (opts.json) return printJson({ profile, url: baseUrl, tenantId: opts.tenantId, tenantStatus: tenant.status, path });
  console.log(`Logged in to ${baseUrl} as tenant ${opts.tenantId} (${tenant.status}); profile "${profile}" saved in ${path}`);
}
