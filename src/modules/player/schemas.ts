import { Type } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** The source config of the embed player: the streaming module's playback description of one asset. */
export const SourceConfig = Type.Object({
  id: Type.String(),
  type: Type.String(),
  status: Type.String(),
  title: Nullable(Type.String()),
  description: Nullable(Type.String()),
  durationMilliseconds: Nullable(Type.Number()),
  poster: Nullable(Type.String()),
  images: Type.Record(Type.String(), Type.Object({ Id: Nullable(Type.String()), Name: Nullable(Type.String()), Url: Type.String() })),
  chapters: Type.Array(Type.Object({ id: Type.String(), title: Nullable(Type.String()), startSecond: Type.Number(), endSecond: Type.Number() })),
  hlsUrl: Nullable(Type.String()),
  dashUrl: Nullable(Type.String()),
  hlsProtection: Nullable(Type.String({ description: '`None`, `Aes128` or `ClearKey`: the protection of the endpoint `hlsUrl` names' })),
  dashProtection: Nullable(Type.String({ description: '`None` or `ClearKey`: the protection of the endpoint `dashUrl` names' })),
  clearKeyLicenseUrl: Nullable(Type.String({ description: 'The ClearKey license URL (EME) when an endpoint is `ClearKey`' })),
  tokenRequired: Type.Boolean(),
  playbackRefusal: Nullable(
    Type.String({ description: 'Why the media will refuse this viewer, in words the player shows: a playback token missing, expired or not valid; else null' }),
  ),
  live: Type.Boolean(),
  settings: Type.Object({ devToolsAccess: Type.Boolean(), analytics: Type.Boolean(), codeObfuscation: Type.Boolean(), cap: Type.Boolean() }),
});
