import { DRM_KEY_MODES } from '../drm/index.ts';
import { presetById } from '../transcoder/index.ts';
import type { CaptionModel } from '../../media/live/index.ts';
import ipaddr from 'ipaddr.js';
import type { Static } from 'typebox';
import { ApiError, type FieldError } from '../../platform/errors.ts';
import { DEFAULT_QUALITIES, MAX_HEIGHT, MIN_HEIGHT, qualityHeight } from './ladder.ts';
import type * as s from './schemas.ts';
import {
  AUTO_RECORD_OFF,
  type AutoRecordRow,
  type ChannelEndpointRow,
  type InputLossRow,
  type InputRow,
  type Mp4SourceRow,
  type QualityRow,
  type RestreamRow,
} from './tables.ts';

/** Shown instead of a stored secret (mp4Sources passwords, restream stream keys); sent back, it keeps the secret. */
export const MASK = '********';

const INPUT_TYPES = ['RTMP_PUSH', 'MP4_FILE'] as const;
const INPUT_PROTOCOLS = ['RTMP', 'SRT'] as const;

/** Collects the problems of one body, so that one answer names them all. */
export class Problems {
  readonly list: FieldError[] = [];
  add(field: string, message: string): void {
    this.list.push({ field, message });
  }
  throwIfAny(): void {
    if (this.list.length) throw new ApiError(400, 'validation_failed', this.list.map((p) => `${p.field}: ${p.message}`).join('; '), this.list);
  }
}

const isHttpUrl = (raw: string) => {
  try {
    const u = new URL(raw);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
  } catch {
    return false;
  }
};

const isRtmpUrl = (raw: string) => {
  try {
    const u = new URL(raw);
    return (u.protocol === 'rtmp:' || u.protocol === 'rtmps:') && !!u.hostname;
  } catch {
    return false;
  }
};

/** `10.0.0.0/8`, `2001:db8::/32`, or a single address (a /32 or /128). */
function parseCidr(raw: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  try {
    return raw.includes('/')
      ? ipaddr.parseCIDR(raw)
      : (() => {
          const ip = ipaddr.parse(raw);
          return [ip, ip.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
        })();
  } catch {
    return undefined;
  }
}

/** Whether `address` (as a socket reports it, IPv4-mapped IPv6 included) lies in `cidr`. */
export function addressInCidr(address: string, cidr: string): boolean {
  const range = parseCidr(cidr);
  if (!range || !ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  const [net, bits] = range;
  const netIp = net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() ? (net as ipaddr.IPv6).toIPv4Address() : net;
  if (ip.kind() !== netIp.kind()) return false;
  return ip.match(netIp as never, netIp.kind() === 'ipv4' && net.kind() === 'ipv6' ? bits - 96 : bits);
}

const HEX_COLOR = /^#?[0-9a-fA-F]{6}$/;

function inputLoss(given: Partial<InputLossRow> | undefined, before: InputLossRow | undefined, p: Problems): InputLossRow {
  const type = given?.type ?? before?.type ?? 'COLOR';
  const loss: InputLossRow = { type };
  const slate = given?.imageSlateUri ?? before?.imageSlateUri;
  const color = given?.color ?? before?.color;
  if (slate !== undefined && slate !== '') {
    if (!isHttpUrl(slate)) p.add('input.inputLoss.imageSlateUri', 'must be an http(s) URL of a PNG or JPEG picture');
    loss.imageSlateUri = slate;
  }
  if (color !== undefined && color !== '') {
    if (!HEX_COLOR.test(color)) p.add('input.inputLoss.color', 'must be a hex colour such as #000000');
    loss.color = color.startsWith('#') ? color.toUpperCase() : `#${color.toUpperCase()}`;
  }
  if (type === 'SLATE' && !loss.imageSlateUri) p.add('input.inputLoss.imageSlateUri', 'is required when type is SLATE');
  return loss;
}

/**
 * Sources as given, with each password the client sent back masked (or left out) replaced by the stored one of the
 * source with the same URL: a configuration read, edited and sent back keeps its secrets.
 */
function mp4Sources(given: Static<typeof s.Mp4Source>[], before: Mp4SourceRow[], p: Problems): Mp4SourceRow[] {
  return given.map((src, i) => {
    if (!isHttpUrl(src.url)) p.add(`input.mp4Sources[${i}].url`, 'must be an http(s) URL');
    const kept = before.find((b) => b.url === src.url)?.password;
    const password = src.password === undefined || src.password === MASK ? kept : src.password;
    return { url: src.url, ...(src.username ? { username: src.username } : {}), ...(password ? { password } : {}) };
  });
}

type InputBody = Partial<Omit<Static<typeof s.ChannelCreate>['input'], 'inputLoss'>> & { inputLoss?: Partial<InputLossRow> };

export function normalizeInput(given: InputBody | undefined, before: InputRow | undefined, p: Problems): InputRow {
  const type = given?.type ?? before?.type ?? 'RTMP_PUSH';
  if (!(INPUT_TYPES as readonly string[]).includes(type)) p.add('input.type', `must be one of ${INPUT_TYPES.join(', ')}`);
  const sources = given?.mp4Sources !== undefined ? mp4Sources(given.mp4Sources, before?.mp4Sources ?? [], p) : (before?.mp4Sources ?? []);
  if (type === 'MP4_FILE' && sources.length === 0) p.add('input.mp4Sources', 'at least one source is required when input.type is MP4_FILE');
  const cidr = given?.whitelistCidr !== undefined ? given.whitelistCidr : before?.whitelistCidr;
  if (cidr && !parseCidr(cidr)) p.add('input.whitelistCidr', 'must be a CIDR such as 203.0.113.0/24 or 2001:db8::/32');
  const protocol = given?.transportInputProtocol ?? before?.transportInputProtocol ?? 'RTMP';
  if (!(INPUT_PROTOCOLS as readonly string[]).includes(protocol)) p.add('input.transportInputProtocol', `must be ${INPUT_PROTOCOLS.join(' or ')}`);
  // The SRT listener (ffmpeg with libsrt) cannot tell whom it accepts by address: a whitelist would be a silent no-op.
  if (protocol === 'SRT' && cidr)
    p.add('input.whitelistCidr', 'is not available with transportInputProtocol SRT (the passphrase authenticates the encoder); remove it or use RTMP');
  return {
    type,
    mp4Sources: sources,
    ...(cidr ? { whitelistCidr: cidr } : {}),
    inputLoss: inputLoss(given?.inputLoss, before?.inputLoss, p),
    transportInputProtocol: protocol,
  };
}

export function normalizeEndpoints(given: Static<typeof s.ChannelEndpointRequest>[] | undefined, p: Problems): ChannelEndpointRow[] {
  const list = given?.length ? given : [{ type: 'Hls' as const }, { type: 'Dash' as const }];
  const rows = list.map((e, i) => {
    // `HlsDrm` and `Hls` with isDrmProtected are one thing, stored as the first (docs/decisions/drm.md, "Live channels").
    const drm = e.type.endsWith('Drm') || e.isDrmProtected === true;
    if (e.type.endsWith('Drm') && e.isDrmProtected === false) p.add(`endpoints[${i}].isDrmProtected`, `${e.type} is DRM-protected; leave it out or send true`);
    const type = drm && !e.type.endsWith('Drm') ? `${e.type}Drm` : e.type;
    const scheme = e.scheme ?? (type === 'DashDrm' ? 'cenc' : type === 'HlsDrm' ? 'aes-128' : undefined);
    if (scheme && !(type === 'DashDrm' ? ['cenc', 'cbcs'] : type === 'HlsDrm' ? ['aes-128', 'cbcs'] : []).includes(scheme))
      p.add(
        `endpoints[${i}].scheme`,
        type.startsWith('Dash')
          ? 'a DashDrm endpoint is encrypted with cenc or cbcs'
          : type === 'HlsDrm'
            ? 'an HlsDrm endpoint is encrypted with aes-128 or cbcs (SAMPLE-AES)'
            : 'is for DRM-protected endpoints only',
      );
    return { type, hasVerticalOrientation: e.hasVerticalOrientation ?? false, isDrmProtected: drm, ...(scheme === 'cbcs' ? { scheme } : {}) };
  });
  // A clear endpoint would serve the same content to anyone: DRM is all of a channel's endpoints or none.
  if (rows.some((r) => r.isDrmProtected) && rows.some((r) => !r.isDrmProtected))
    p.add('endpoints', 'a channel with a DRM-protected endpoint may have no clear one (it would serve the same content unencrypted)');
  if (new Set(rows.map((r) => r.hasVerticalOrientation)).size > 1)
    p.add('endpoints', 'all endpoints of a channel share one orientation (one encode per channel)');
  if (new Set(rows.map((r) => `${r.type}/${r.scheme ?? ''}`)).size < rows.length)
    p.add('endpoints', 'each endpoint type may be listed once (a DRM endpoint once per scheme)');
  return rows;
}

export function normalizeQualities(given: Static<typeof s.Quality>[] | undefined, p: Problems): QualityRow[] {
  const list = given?.length ? given : DEFAULT_QUALITIES;
  const rows: QualityRow[] = [];
  list.forEach((q, i) => {
    const resolution = q.resolution ?? '720p';
    const height = qualityHeight(resolution);
    if (height === undefined)
      return p.add(`qualities[${i}].resolution`, `must name a height from ${MIN_HEIGHT}p to ${MAX_HEIGHT}p, such as 360p, 720p, 1080p or 2160p`);
    if (rows.some((r) => r.height === height)) return p.add(`qualities[${i}].resolution`, `${height}p is listed twice`);
    rows.push({ resolution, height, ...(q.frameRate === undefined ? {} : { frameRate: q.frameRate }) });
  });
  return rows;
}

/** Restreams as stored; the owner of an On channel pushes to each destination (docs/decisions/live.md, "Restreams"). */
export function normalizeRestreams(given: Static<typeof s.Restreams> | undefined, before: RestreamRow[], p: Problems): RestreamRow[] {
  if (!given) return before;
  const ids = new Set<string>();
  return given.map((r, i) => {
    if (ids.has(r.id)) p.add(`restreams[${i}].id`, `"${r.id}" is listed twice`);
    ids.add(r.id);
    const old = before.find((b) => b.id === r.id);
    return {
      id: r.id,
      protocol: r.protocol,
      destination: r.destination,
      ...(r.label !== undefined ? { label: r.label } : {}),
      ...(r.hasVerticalOrientation !== undefined ? { hasVerticalOrientation: r.hasVerticalOrientation } : {}),
      rtmpDestinations: r.rtmpDestinations.map((d, j) => {
        if (!isRtmpUrl(d.url)) p.add(`restreams[${i}].rtmpDestinations[${j}].url`, 'must be an rtmp:// or rtmps:// URL');
        const streamKey = d.streamKey === MASK ? old?.rtmpDestinations.find((o) => o.url === d.url)?.streamKey : d.streamKey;
        if (!streamKey) p.add(`restreams[${i}].rtmpDestinations[${j}].streamKey`, 'is masked but no stored key exists for this url');
        return { url: d.url, streamKey: streamKey ?? '' };
      }),
    };
  });
}

const LANGUAGE_CODE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/**
 * Live captions are made only in a language whose speech model is installed (`ai-live-caption-languages`): another one
 * is refused here rather than accepted and silently never captioned. Returns the code as the model spells it (`en-US`).
 */
export function checkCaptionLanguage(code: string | null | undefined, models: CaptionModel[], p: Problems): string | null | undefined {
  if (!code) return code;
  if (!LANGUAGE_CODE.test(code)) {
    p.add('aiLiveCaptioningLanguageCode', 'must be a language code such as en-GB');
    return code;
  }
  const model = models.find((m) => m.code.toLowerCase() === code.toLowerCase());
  if (model) return model.code;
  const offered = models.map((m) => m.code).join(', ');
  p.add(
    'aiLiveCaptioningLanguageCode',
    `no speech model for ${code} is installed; ${offered ? `installed: ${offered}` : 'none is installed'} (GET /live/v1/channels/ai-live-caption-languages)`,
  );
  return code;
}

/**
 * DRM endpoints: a known key mode, whole segments only (low-latency parts have no encrypted form), and no forensic
 * watermarking beside them: the watermarking redirector serves the marked variants unencrypted, which would hand a
 * DRM channel's pictures out in the clear.
 */
export function checkDrm(
  endpoints: ChannelEndpointRow[],
  o: { latency: string; drmKeyMode: string | null | undefined; isWatermarkProtected: boolean },
  p: Problems,
): void {
  if (o.drmKeyMode && !(DRM_KEY_MODES as readonly string[]).includes(o.drmKeyMode))
    p.add('drmKeyMode', 'must be SingleKey (one key for every track) or AudioVideoKeys (one key for the video tracks, another for audio)');
  const drm = endpoints.some((e) => e.isDrmProtected);
  if (drm && o.latency === 'ReducedLatency')
    p.add('endpoints', 'DRM-protected endpoints are available with latency NormalLatency only (low-latency parts are not encrypted)');
  if (drm && o.isWatermarkProtected)
    p.add('endpoints', 'DRM-protected endpoints cannot be combined with isWatermarkProtected (the watermarked variants are not encrypted)');
}

/**
 * `autoRecord` as stored: each field given replaces the stored one (`archive` as a whole, `outputs` as a list). Presets
 * must exist (`400 preset_not_found`, as a recording's) and dates be in the future, as when a recording is created.
 */
export function normalizeAutoRecord(given: Static<typeof s.ChannelCreate>['autoRecord'], before: AutoRecordRow | undefined, p: Problems): AutoRecordRow {
  const base = before ?? AUTO_RECORD_OFF;
  if (given === undefined) return base;
  const future = (value: string | undefined, field: string): string | null => {
    if (value === undefined) return null;
    const d = new Date(value);
    if (d.getTime() <= Date.now()) p.add(field, 'must be in the future');
    return d.toISOString();
  };
  const archive = given.archive
    ? {
        enabled: given.archive.enabled ?? false,
        delaySeconds: given.archive.delaySeconds ?? 0,
        public: given.archive.public ?? false,
        expirationDate: future(given.archive.expirationDate, 'autoRecord.archive.expirationDate'),
      }
    : base.archive;
  const unknown: FieldError[] = [];
  const outputs = given.outputs
    ? given.outputs.map((o, i) => {
        const preset = presetById(o.preset);
        if (!preset) unknown.push({ field: `autoRecord.outputs[${i}].preset`, message: 'unknown preset' });
        return { preset: preset?.id ?? o.preset, expirationDate: future(o.expirationDate, `autoRecord.outputs[${i}].expirationDate`) };
      })
    : base.outputs;
  if (unknown.length)
    throw new ApiError(400, 'preset_not_found', `${unknown.map((u) => `${u.field}: unknown preset`).join('; ')}; see GET /transcoder/v1/presets`, unknown);
  return { enabled: given.enabled ?? base.enabled, archive, outputs };
}
