import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { InputSlot, RtmpIngest, RtmpIngestOptions } from './types.ts';

/*
 * node-media-server 4 is used for its RTMP protocol code only (handshake, chunking, AMF, FLV tags): we build its
 * RtmpSession over our own net.Server and never construct NodeMediaServer, so its express admin, HTTP-FLV, recorder,
 * relay and JSON store (./data in the working directory) never start. Its logger is a process-wide singleton that
 * prints to stdout; it is routed to our logger at warn.
 */
const require = createRequire(import.meta.url);
const RtmpSession = require('node-media-server/src/session/rtmp_session.js');
const nmsLogger = require('node-media-server/src/core/logger.js');

/** The most recently started ingest's logger receives node-media-server's own warnings (one ingest per process). */
let nmsLog: Logger | undefined;
nmsLogger.log = (message: string, level = 'info') => {
  if (level === 'warn' || level === 'error') nmsLog?.[level]({ rtmp: message }, 'node-media-server');
};

/** An RTMP publisher that sends nothing for this long is disconnected (a stalled encoder is an input loss). */
const STALL_MS = 5000;
/** Stream keys and channel ids travel as RTMP stream names, which the protocol code accepts only in this alphabet. */
const SAFE_NAME = /^[A-Za-z0-9_-]{1,200}$/;

interface Publisher {
  channelId: string;
  slot: InputSlot;
  /** The stream's name inside node-media-server: the channel id, with a suffix for the secondary input. */
  name: string;
  socket: Socket;
  lastDataAt: number;
  bytes: number;
  /** Video frames received (coded pictures, not the codec's headers): the input's own frame rate. */
  frames: number;
}

interface NmsSession {
  socket: Socket;
  rtmp: {
    streamId: number;
    onPublish(msg: { streamName: string }): void;
    onPlay(msg: { streamName: string }): void;
    sendStatusMessage(sid: number, level: string, code: string, description: string): void;
  };
  broadcast: { publishGraceMs: number };
  /** Every media tag the publisher sends; run() hands it to the protocol parser, so it is wrapped before run(). */
  onPacket(packet: { codec_type: number; flags: number }): void;
  onPush: () => void;
  run(): void;
}

/** node-media-server knows a channel's secondary input under this name (the primary under the channel id). */
const streamName = (channelId: string, slot: InputSlot = 'primary') => (slot === 'secondary' ? `${channelId}_secondary` : channelId);

const isLoopback = (address: string | undefined) => address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';

export async function startRtmpIngest(opts: RtmpIngestOptions): Promise<RtmpIngest> {
  nmsLog = opts.log;
  // Only a local ffmpeg that knows this process's secret may play a published stream back.
  const playToken = randomBytes(16).toString('hex');
  // …and only a local relay (an SRT listener of this process) that knows this one publishes as `relayed`.
  const relayToken = randomBytes(16).toString('hex');
  const publishers = new Map<string, Publisher>();
  const sockets = new Set<Socket>();

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const remoteAddress = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    let publisher: Publisher | undefined;
    const session: NmsSession = new RtmpSession(socket);
    const refuse = (code: string, why: string) => {
      opts.log.info({ remoteAddress, why }, 'RTMP publish refused');
      session.rtmp.sendStatusMessage(session.rtmp.streamId, 'error', code, why);
      socket.destroy();
    };
    const onPublish = session.rtmp.onPublish.bind(session.rtmp);
    session.rtmp.onPublish = (msg) => {
      const [streamKey = '', query = ''] = String(msg.streamName ?? '').split('?');
      if (!SAFE_NAME.test(streamKey)) return refuse('NetStream.Publish.BadName', 'invalid stream key');
      const relayed = isLoopback(socket.remoteAddress) && new URLSearchParams(query).get('relay') === relayToken;
      const verdict = opts.authorize(streamKey, remoteAddress, { relayed });
      if ('refused' in verdict) return refuse('NetStream.Publish.BadName', verdict.refused);
      const { channelId, slot = 'primary' } = verdict;
      if (!SAFE_NAME.test(channelId)) return refuse('NetStream.Publish.BadName', 'invalid channel');
      const name = streamName(channelId, slot);
      if (publishers.has(name)) return refuse('NetStream.Publish.BadName', 'the channel input already has a publisher');
      publisher = { channelId, slot, name, socket, lastDataAt: Date.now(), bytes: 0, frames: 0 };
      publishers.set(name, publisher);
      // The key never reaches node-media-server: the stream is known there by its channel id (and input).
      onPublish({ ...msg, streamName: name });
      // A reconnecting encoder is a new publish for us (the pipeline switches back from the slate); no resume window.
      session.broadcast.publishGraceMs = 0;
      opts.log.info({ channelId, slot, remoteAddress, relayed }, 'RTMP publisher connected');
      opts.onPublish(channelId, slot);
    };
    const onPlay = session.rtmp.onPlay.bind(session.rtmp);
    session.rtmp.onPlay = (msg) => {
      const [, query = ''] = String(msg.streamName ?? '').split('?');
      if (!isLoopback(socket.remoteAddress) || new URLSearchParams(query).get('token') !== playToken) {
        session.rtmp.sendStatusMessage(session.rtmp.streamId, 'error', 'NetStream.Play.Failed', 'playback is not offered');
        socket.destroy();
        return;
      }
      onPlay(msg);
    };
    const onPacket = session.onPacket;
    session.onPacket = (packet) => {
      // FLV video tag (9) holding a key (3) or inter (4) frame.
      if (publisher && packet.codec_type === 9 && (packet.flags === 3 || packet.flags === 4)) publisher.frames++;
      onPacket(packet);
    };
    socket.on('data', (chunk: Buffer) => {
      if (!publisher) return;
      publisher.lastDataAt = Date.now();
      publisher.bytes += chunk.length;
    });
    socket.on('close', () => {
      sockets.delete(socket);
      if (publisher && publishers.get(publisher.name) === publisher) {
        publishers.delete(publisher.name);
        opts.log.info({ channelId: publisher.channelId, slot: publisher.slot }, 'RTMP publisher disconnected');
        opts.onUnpublish(publisher.channelId, publisher.slot);
      }
    });
    session.run();
  });

  const stallTimer = setInterval(() => {
    const now = Date.now();
    for (const p of publishers.values()) {
      if (now - p.lastDataAt > STALL_MS) {
        opts.log.warn({ channelId: p.channelId, slot: p.slot }, 'RTMP publisher stalled; disconnecting it');
        p.socket.destroy();
      }
    }
  }, 1000);
  stallTimer.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => opts.log.error({ err: e }, 'RTMP listener error'));
  const port = (server.address() as { port: number }).port;
  opts.log.info({ host: opts.host, port }, 'RTMP ingest listening');

  return {
    port,
    inputUrl(channelId, slot) {
      const name = streamName(channelId, slot);
      if (!publishers.has(name)) return undefined;
      return `rtmp://127.0.0.1:${port}/live/${name}?token=${playToken}`;
    },
    bytesReceived(channelId, slot) {
      return publishers.get(streamName(channelId, slot))?.bytes;
    },
    framesReceived(channelId, slot) {
      return publishers.get(streamName(channelId, slot))?.frames;
    },
    relayUrl(name) {
      return `rtmp://127.0.0.1:${port}/live/${name}?relay=${relayToken}`;
    },
    kick(channelId) {
      publishers.get(streamName(channelId, 'primary'))?.socket.destroy();
      publishers.get(streamName(channelId, 'secondary'))?.socket.destroy();
    },
    async close() {
      clearInterval(stallTimer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
      if (nmsLog === opts.log) nmsLog = undefined;
    },
  };
}
