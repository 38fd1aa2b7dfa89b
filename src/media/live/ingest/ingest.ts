import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { InputSlot, RtmpIngest, RtmpIngestOptions } from '../types.ts';

/*
 * node-media-server 4 is used for its RTMP protocol code only (handshake, chunking, AMF, FLV tags): we build its
 * RtmpSession over our own net.Server and never construct NodeMediaServer, so its express admin, HTTP-FLV, recorder,
 * relay and JSON store (./data in the working directory) never start. Its logger is a process-wide singleton that
 * prints to stdout; it is routed to our logger at warn.
 */
const require = createRequire(import.meta.url);
const RtmpSession = require('node-media-server/src/session/rtmp_session.js');
const nmsLogger = require('node-media-server/src/core/logger.js');
const BroadcastServer = require('node-media-server/src/server/broadcast_server.js');
const nmsContext = require('node-media-server/src/core/context.js');

/** The most recently started ingest's logger receives node-media-server's own warnings (one ingest per process). */
let nmsLog: Logger | undefined;
nmsLogger.log = (message: string, level = 'info') => {
  if (level === 'warn' || level === 'error') nmsLog?.[level]({ rtmp: message }, 'node-media-server');
};

/** An RTMP publisher that sends nothing for this long is disconnected (a stalled encoder is an input loss). */
const STALL_MS = 5000;
/** Stream keys and channel ids travel as RTMP stream names, which the protocol code accepts only in this alphabet. */
const SAFE_NAME = /^[A-Za-z0-9_-]{1,200}$/;

/** A media tag as node-media-server's protocol code parses it (FLV tag type, its kind of content, its timestamps). */
interface Packet {
  /** 8 audio, 9 video, 18 script data. */
  codec_type: number;
  /** 0 audio config, 1 audio frame, 2 video config, 3 key frame, 4 inter frame, 5 metadata. */
  flags: number;
  dts: number;
  pts: number;
  size: number;
  data: Buffer;
}

/** node-media-server's broadcast of one stream: what its players receive, and what a new player is sent first. */
interface NmsBroadcast {
  broadcastMessage(packet: Packet): void;
  flvMetaData: Buffer | null;
  flvAudioHeader: Buffer | null;
  flvVideoHeader: Buffer | null;
  rtmpMetaData: Buffer | null;
  rtmpAudioHeader: Buffer | null;
  rtmpVideoHeader: Buffer | null;
  flvGopCache: Set<Buffer> | null;
  rtmpGopCache: Set<Buffer> | null;
}

/** A GOP longer than this many tags is not kept (node-media-server's own bound for its GOP cache). */
const MAX_GOP_TAGS = 4096;

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
  /** Its latest metadata and codec configurations, and its tags since its latest key frame: how a programme starts on it. */
  metadata?: Packet;
  audioConfig?: Packet;
  videoConfig?: Packet;
  gop: Packet[];
}

/**
 * A channel's programme: the stream its encode plays, fed with the tags of the selected input. A switch between inputs
 * happens inside it (the encode's ffmpeg reads on, never restarts): it waits for the new input's next key frame, sends
 * that input's codec configurations (ffmpeg's FLV demuxer hands new ones to the decoders mid-stream) and shifts its
 * timestamps to continue the programme's at the wall clock's pace (the time the switch took is a gap the encode's
 * fps filter fills by repeating the last picture).
 */
interface Programme {
  channelId: string;
  broadcast: NmsBroadcast;
  /** The publisher it plays (a reconnected encoder is another one, so a new start). */
  source: Publisher | undefined;
  /** The selected input's tags are held back until its next key frame (a switch inside the running programme). */
  waiting: boolean;
  /** Added to the selected input's timestamps. */
  offset: number;
  /** The last timestamp sent, per tag type (8, 9), and when: a switch continues after them. Empty: a fresh programme. */
  lastDts: Map<number, number>;
  lastAt: number;
  bytes: number;
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
  broadcast: NmsBroadcast | { publishGraceMs: number };
  /** Every media tag the publisher sends; run() hands it to the protocol parser, so it is wrapped before run(). */
  onPacket(packet: Packet): void;
  onPush: () => void;
  run(): void;
}

/** node-media-server knows a channel's secondary input under this name (the primary under the channel id). */
const streamName = (channelId: string, slot: InputSlot = 'primary') => (slot === 'secondary' ? `${channelId}_secondary` : channelId);
/** …and its programme under this one (no publisher can take it: publishers are named by the two above). */
const programmeName = (channelId: string) => `${channelId}_programme`;

const isLoopback = (address: string | undefined) => address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';

export async function startRtmpIngest(opts: RtmpIngestOptions): Promise<RtmpIngest> {
  nmsLog = opts.log;
  // Only a local ffmpeg that knows this process's secret may play a published stream back.
  const playToken = randomBytes(16).toString('hex');
  // …and only a local relay (an SRT listener of this process) that knows this one publishes as `relayed`.
  const relayToken = randomBytes(16).toString('hex');
  const publishers = new Map<string, Publisher>();
  const sockets = new Set<Socket>();
  const programmes = new Map<string, Programme>();

  const programmeOf = (channelId: string): Programme => {
    let p = programmes.get(channelId);
    if (!p) {
      const broadcast: NmsBroadcast = new BroadcastServer(`/live/${programmeName(channelId)}`);
      p = { channelId, broadcast, source: undefined, waiting: false, offset: 0, lastDts: new Map(), lastAt: 0, bytes: 0, frames: 0 };
      programmes.set(channelId, p);
    }
    return p;
  };

  /** Sends a tag of the selected input to the programme's players, on the programme's timeline. */
  const send = (p: Programme, packet: Packet, dts = packet.dts) => {
    const out = { ...packet, dts: dts + p.offset, pts: packet.pts - packet.dts + dts + p.offset };
    if (out.codec_type === 8 || out.codec_type === 9) {
      // Never back in time on a track (an audio tag of the new input from just before its key frame): left out.
      if (out.dts < (p.lastDts.get(out.codec_type) ?? -Infinity)) return;
      p.lastDts.set(out.codec_type, out.dts);
      p.lastAt = Date.now();
    }
    p.bytes += out.size;
    if (out.codec_type === 9 && (out.flags === 3 || out.flags === 4)) p.frames++;
    p.broadcast.broadcastMessage(out);
  };

  /** A tag of an input: kept for a later switch to it, and sent on if its channel's programme plays that input. */
  const onInputPacket = (publisher: Publisher, parsed: Packet) => {
    // The protocol code reuses its payload buffer for the next message: what is kept or sent on is a copy.
    const packet = { ...parsed, data: Buffer.from(parsed.data.subarray(0, parsed.size)) };
    if (packet.flags === 5) publisher.metadata = packet;
    else if (packet.flags === 0) publisher.audioConfig = packet;
    else if (packet.flags === 2) publisher.videoConfig = packet;
    else if (packet.flags === 3) publisher.gop = [packet];
    else if (publisher.gop.length && publisher.gop.length < MAX_GOP_TAGS) publisher.gop.push(packet);
    else publisher.gop = [];
    const p = programmes.get(publisher.channelId);
    if (!p || p.source !== publisher || packet.flags === 5) return;
    if (p.waiting) {
      // Video starts at a key frame; an input without video at its next audio frame.
      const start = publisher.videoConfig ? packet.codec_type === 9 && packet.flags === 3 : packet.codec_type === 8 && packet.flags === 1;
      if (!start) return;
      startOn(p, publisher, packet.dts);
    }
    send(p, packet);
  };

  /**
   * The programme continues on `publisher` from its tag at `dts` (a key frame): its configurations first. A fresh
   * programme keeps the input's own timestamps and starts with its metadata; a running one continues where it was.
   */
  const startOn = (p: Programme, publisher: Publisher, dts: number) => {
    p.waiting = false;
    const last = Math.max(...p.lastDts.values());
    const fresh = p.lastDts.size === 0;
    p.offset = fresh ? 0 : Math.max(last + 1, last + (Date.now() - p.lastAt)) - dts;
    if (!fresh) opts.log.info({ channelId: p.channelId, slot: publisher.slot, gapMs: Date.now() - p.lastAt }, 'programme continues on the other input');
    if (fresh && publisher.metadata) send(p, publisher.metadata, dts);
    for (const config of [publisher.audioConfig, publisher.videoConfig]) if (config) send(p, config, dts);
  };

  /** Back to nothing: a programme that starts again later is fresh (a new encode run plays it). */
  const resetProgramme = (p: Programme) => {
    p.source = undefined;
    p.waiting = false;
    p.lastDts.clear();
    const b = p.broadcast;
    b.flvMetaData = b.flvAudioHeader = b.flvVideoHeader = b.rtmpMetaData = b.rtmpAudioHeader = b.rtmpVideoHeader = null;
    b.flvGopCache?.clear();
    b.rtmpGopCache?.clear();
  };

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
    let publishing = false;
    session.rtmp.onPublish = (msg) => {
      // One publish per connection; the check may take a moment (the encoder waits for the answer before sending media).
      if (publishing) return;
      publishing = true;
      void publish(msg).catch((err) => {
        opts.log.error({ err }, 'RTMP publish check failed');
        if (!socket.destroyed) refuse('NetStream.Publish.BadName', 'the stream key could not be checked; try again');
      });
    };
    const publish = async (msg: { streamName: string }) => {
      const [streamKey = '', query = ''] = String(msg.streamName ?? '').split('?');
      if (!SAFE_NAME.test(streamKey)) return refuse('NetStream.Publish.BadName', 'invalid stream key');
      const relayed = isLoopback(socket.remoteAddress) && new URLSearchParams(query).get('relay') === relayToken;
      const verdict = await opts.authorize(streamKey, remoteAddress, { relayed });
      // The encoder gave up while the key was being checked.
      if (socket.destroyed) return;
      if ('refused' in verdict) return refuse('NetStream.Publish.BadName', verdict.refused);
      const { channelId, slot = 'primary' } = verdict;
      if (!SAFE_NAME.test(channelId)) return refuse('NetStream.Publish.BadName', 'invalid channel');
      const name = streamName(channelId, slot);
      if (publishers.has(name)) return refuse('NetStream.Publish.BadName', 'the channel input already has a publisher');
      publisher = { channelId, slot, name, socket, lastDataAt: Date.now(), bytes: 0, frames: 0, gop: [] };
      publishers.set(name, publisher);
      // The key never reaches node-media-server: the stream is known there by its channel id (and input).
      onPublish({ ...msg, streamName: name });
      // A reconnecting encoder is a new publish for us (the pipeline switches back from the slate); no resume window.
      (session.broadcast as { publishGraceMs: number }).publishGraceMs = 0;
      opts.log.info({ channelId, slot, remoteAddress, relayed }, 'RTMP publisher connected');
      opts.onPublish(channelId, slot);
    };
    const onPlay = session.rtmp.onPlay.bind(session.rtmp);
    session.rtmp.onPlay = (msg) => {
      const [name = '', query = ''] = String(msg.streamName ?? '').split('?');
      if (!isLoopback(socket.remoteAddress) || new URLSearchParams(query).get('token') !== playToken) {
        session.rtmp.sendStatusMessage(session.rtmp.streamId, 'error', 'NetStream.Play.Failed', 'playback is not offered');
        socket.destroy();
        return;
      }
      // A programme is ours, not node-media-server's: its player joins our broadcast object.
      const programme = programmes.get(name.replace(/_programme$/, ''));
      if (programme && name.endsWith('_programme')) {
        session.broadcast = programme.broadcast;
        nmsContext.broadcasts.set(`/live/${name}`, programme.broadcast);
      }
      onPlay(msg);
    };
    const onPacket = session.onPacket;
    session.onPacket = (packet) => {
      // FLV video tag (9) holding a key (3) or inter (4) frame.
      if (publisher && packet.codec_type === 9 && (packet.flags === 3 || packet.flags === 4)) publisher.frames++;
      onPacket(packet);
      if (publisher) onInputPacket(publisher, packet);
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
    programmeUrl(channelId) {
      programmeOf(channelId);
      return `rtmp://127.0.0.1:${port}/live/${programmeName(channelId)}?token=${playToken}`;
    },
    select(channelId, slot) {
      const p = programmeOf(channelId);
      const publisher = slot ? publishers.get(streamName(channelId, slot)) : undefined;
      if (p.source === publisher && publisher) return;
      if (!publisher) return resetProgramme(p);
      p.source = publisher;
      p.waiting = true;
      // A fresh programme starts at once from the input's latest key frame (its cached GOP), as a new run did before.
      const [key, ...rest] = publisher.gop;
      if (p.lastDts.size === 0 && key) {
        startOn(p, publisher, key.dts);
        for (const packet of [key, ...rest]) send(p, packet);
      }
    },
    programmeBytes(channelId) {
      return programmes.get(channelId)?.bytes ?? 0;
    },
    programmeFrames(channelId) {
      return programmes.get(channelId)?.frames ?? 0;
    },
    forget(channelId) {
      const p = programmes.get(channelId);
      if (p) resetProgramme(p);
      programmes.delete(channelId);
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
