import { Type } from 'typebox';

/** The boolean options of the embed page and the QR code, with the spec's capitalised names, in this order. */
export const PLAYER_FLAGS = ['Muted', 'Autoplay', 'TimeShift', 'Analytics'] as const;
export type PlayerFlags = Partial<Record<(typeof PLAYER_FLAGS)[number], boolean>>;

/** `{publicUrl}/player/v1/{tenantId}/{assetId}` with the options given (and only those), e.g. `?Muted=true`. */
export function embedUrlOf(publicUrl: URL, tenantId: string, assetId: string, flags: PlayerFlags = {}, token?: string): string {
  const url = new URL(`player/v1/${encodeURIComponent(tenantId)}/${encodeURIComponent(assetId)}`, publicUrl.href.replace(/\/*$/, '/'));
  for (const name of PLAYER_FLAGS) if (flags[name] !== undefined) url.searchParams.set(name, String(flags[name]));
  if (token) url.searchParams.set('token', token);
  return url.href;
}

/** The embed URL's query as the embed page and the QR code take it: the spec's booleans and a playback token. */
export const EmbedQuery = Type.Object({
  Muted: Type.Optional(Type.Boolean()),
  Autoplay: Type.Optional(Type.Boolean()),
  TimeShift: Type.Optional(Type.Boolean()),
  Analytics: Type.Optional(Type.Boolean()),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
});
