import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { liveMasterPlaylist, liveMediaPlaylist, masterPlaylist, mediaPlaylist, resolveSession, segmentLocation } from './redirector.ts';
import * as s from './schemas.ts';
import { mediaResponse } from '../../platform/schemas.ts';

const CORS = { 'access-control-allow-origin': '*', 'cache-control': 'no-store' };
const HLS = 'application/vnd.apple.mpegurl';

/**
 * The three redirector operations, for players: no API key, the signed token in the path (so that the playlists'
 * relative URLs carry it), checked with its session on every request.
 */
export const redirectorRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Watermarking redirector'];
  const errors = { 400: Type.Ref('Error'), 401: Type.Ref('Error'), 403: Type.Ref('Error'), 404: Type.Ref('Error') };
  const text = { 200: mediaResponse(HLS, Type.String(), 'an HLS playlist'), ...errors };

  app.get(
    '/watermarking/v1/redirector/:token/master.m3u8',
    {
      schema: {
        tags,
        summary: 'Get redirector master playlist',
        description:
          "The multivariant HLS playlist of a token's session (a live channel's: every marked rung of its ladder); 401 for a bad or expired token, 403 for a revoked session.",
        params: s.RedirectorParams,
        response: text,
      },
    },
    async (req, reply) => {
      const { asset } = await resolveSession(ctx, req.params.token);
      const playlist = asset.channelPrefix ? await liveMasterPlaylist(ctx, asset) : masterPlaylist(asset);
      return reply.headers({ ...CORS, 'content-type': HLS }).send(playlist);
    },
  );

  app.get(
    '/watermarking/v1/redirector/:token/media.m3u8',
    {
      schema: {
        tags,
        summary: 'Get redirector media playlist',
        description:
          "The HLS media playlist: every segment through the redirector, which picks variant A or B for this viewer; a live channel's playlist (of one marked rung, `rendition`, or its unmarked audio, `rendition=audio`) grows (its window).",
        params: s.RedirectorParams,
        querystring: s.RedirectorQuery,
        response: text,
      },
    },
    async (req, reply) => {
      const { asset } = await resolveSession(ctx, req.params.token);
      const playlist = asset.channelPrefix ? await liveMediaPlaylist(ctx, asset.channelPrefix, req.query.rendition) : mediaPlaylist(asset);
      return reply.headers({ ...CORS, 'content-type': HLS }).send(playlist);
    },
  );

  app.get(
    '/watermarking/v1/redirector/:token/segments/:segment',
    {
      schema: {
        tags,
        summary: 'Get redirector segment',
        description:
          "Redirects (302) to this viewer's variant of one segment (a live channel's audio, `rendition=audio`: the channel's own), a short-lived signed URL.",
        params: s.SegmentParams,
        querystring: s.RedirectorQuery,
        response: { 302: Type.Null(), ...errors },
      },
    },
    async (req, reply) => {
      const location = await segmentLocation(ctx, req.params.token, req.params.segment, req.query.rendition);
      return reply.headers(CORS).redirect(location, 302);
    },
  );
};
