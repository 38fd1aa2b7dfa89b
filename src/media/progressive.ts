import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { mediaPlaylists } from './finish.ts';
import { mpdTimelines } from './mpdTimeline.ts';
import { packagingOf, type EncodeLayout } from './packaging.ts';

/** Where a growing output goes: the caller's store, keyed by paths inside the output directory (`hls/360p/seg_00000.ts`). */
export interface PublishSink {
  /** Stores a finished file (a segment or an init segment): it never changes after this. */
  putFile(path: string, absolutePath: string): Promise<void>;
  /** Stores (or replaces) a manifest: a growing playlist or MPD, always after every file it names. */
  putText(path: string, text: string): Promise<void>;
  /** Called once, when every manifest of the output is stored with at least one segment behind each media playlist. */
  playable(manifests: { format: 'HLS' | 'DASH'; manifest: string }[]): Promise<void>;
  /** A pass that failed (the store refused a file): the next pass tries again, and the finished upload stores all. */
  failed(e: Error): void;
}

export interface Publisher {
  /** Paths stored so far whose bytes are final (segments): the last upload skips them. */
  readonly stored: ReadonlySet<string>;
  /** Stops watching and waits for the pass under way; the caller then uploads the finished output. */
  stop(): Promise<void>;
}

/** Files stored at once by a pass. */
const PARALLEL_PUTS = 8;

/** A pass also runs this often when no file event came (a missed inotify event, a slow disk). */
const FALLBACK_MS = 1000;

/** HLS media playlist lines naming files: segments and the fMP4 init segment (`#EXT-X-MAP:URI="…"`). */
export function playlistFiles(text: string): string[] {
  const files: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (line.startsWith('#EXT-X-MAP:')) {
      const uri = /URI="([^"]+)"/.exec(line)?.[1];
      if (uri) files.push(uri);
    } else if (!line.startsWith('#')) files.push(line);
  }
  return files;
}

/**
 * A growing HLS media playlist as players get it while the encode runs: `EVENT` (ffmpeg's DASH muxer writes its CMAF
 * playlists without a type), never `ENDLIST` (ffmpeg writes it as it exits; the finished VOD playlist replaces it), and
 * a target duration of at least the preset's segments (`segmentSeconds`): a fast start's first segments are one
 * second, and ffmpeg writes the longest so far, but the target duration of a playlist may not change (RFC 8216).
 */
export function asEventPlaylist(text: string, segmentSeconds: number): string {
  let lines = text
    .split('\n')
    .filter((l) => l.trim() !== '#EXT-X-ENDLIST')
    .map((l) => (l.startsWith('#EXT-X-TARGETDURATION:') ? `#EXT-X-TARGETDURATION:${Math.max(Number(l.slice(22)) || 0, Math.ceil(segmentSeconds))}` : l));
  if (!lines.some((l) => l.startsWith('#EXT-X-PLAYLIST-TYPE:'))) {
    const at = lines.findIndex((l) => l.startsWith('#EXT-X-TARGETDURATION:'));
    lines = [...lines.slice(0, at + 1), '#EXT-X-PLAYLIST-TYPE:EVENT', ...lines.slice(at + 1)];
  }
  return lines.join('\n');
}

/** The files a dynamic MPD from ffmpeg's DASH muxer names: each Representation's init segment and media segments. */
export const mpdFiles = (xml: string): string[] => mpdTimelines(xml).flatMap((r) => [...(r.init ? [r.init] : []), ...r.segments.map((s) => s.file)]);

/**
 * Publishes an output while ffmpeg writes it: watches the streaming directory and, after each new segment, stores the
 * files a manifest names and then the manifest, so that a reader of the store never finds a manifest naming a file
 * that is not there. HLS media playlists go out as EVENT playlists (master playlist once every media playlist has a
 * segment), DASH as ffmpeg's dynamic MPD. Once every manifest is out, `sink.playable` is called. Captions and MP4
 * downloads come with the finished output only.
 */
export function publishWhileEncoding(layout: EncodeLayout, sink: PublishSink): Publisher {
  const { streaming } = packagingOf(layout.preset);
  const stored = new Set<string>();
  const published = new Map<string, string>();
  let announced = false;
  if (!streaming) return { stored, stop: async () => {} };

  const dir = join(layout.outDir, streaming);
  const rel = (p: string) => relative(layout.outDir, p).split('\\').join('/');
  const media = Object.values(mediaPlaylists(layout, dir, streaming === 'cmaf')).flat();
  const hlsMaster = streaming === 'dash' ? undefined : join(dir, 'master.m3u8');
  const mpd = streaming === 'hls' ? undefined : join(dir, 'manifest.mpd');

  const read = async (path: string) => readFile(path, 'utf8').catch(() => undefined);
  /**
   * Stores what `names` lists beside `manifest`, all at once (on S3 each is a request); false when a named file is not
   * there yet (nothing is stored then: the next pass tries again).
   */
  const storeNamed = async (manifest: string, names: string[]) => {
    const missing = names.map((name) => ({ abs: join(dirname(manifest), name), path: rel(join(dirname(manifest), name)) })).filter((f) => !stored.has(f.path));
    const present = await Promise.all(missing.map(async (f) => (await stat(f.abs).catch(() => undefined))?.isFile() === true));
    if (present.includes(false)) return false;
    // A few at a time: after a store outage a pass may find many segments waiting.
    for (let i = 0; i < missing.length; i += PARALLEL_PUTS) {
      await Promise.all(
        missing.slice(i, i + PARALLEL_PUTS).map(async (f) => {
          await sink.putFile(f.path, f.abs);
          stored.add(f.path);
        }),
      );
    }
    return true;
  };
  const putManifest = async (path: string, text: string) => {
    if (published.get(path) === text) return;
    await sink.putText(path, text);
    published.set(path, text);
  };

  const pass = async () => {
    // Media playlists first, side by side: the master names them, and a player opens it first.
    const playlists = await Promise.all(
      (streaming === 'dash' ? [] : media).map(async (playlist) => {
        const text = await read(playlist);
        // ffmpeg replaces its playlists by renaming a complete file; a text without its last newline is not one.
        const names = text?.endsWith('\n') ? playlistFiles(text) : [];
        if (!text || !names.some((n) => !n.startsWith('init'))) return false;
        if (!(await storeNamed(playlist, names))) return false;
        await putManifest(rel(playlist), asEventPlaylist(text, layout.preset.segmentSeconds));
        return true;
      }),
    );
    const everyPlaylist = !playlists.includes(false);
    const manifests: { format: 'HLS' | 'DASH'; manifest: string }[] = [];
    if (hlsMaster) {
      const text = await read(hlsMaster);
      if (everyPlaylist && text?.endsWith('\n')) {
        await putManifest(rel(hlsMaster), text);
        manifests.push({ format: 'HLS', manifest: rel(hlsMaster) });
      }
    }
    if (mpd) {
      const xml = await read(mpd);
      // The MPD ffmpeg writes as it exits is static: the finishing step completes that one and uploads it.
      if (xml?.includes('</MPD>') && /type="dynamic"/.test(xml) && mpdFiles(xml).length > 0 && (await storeNamed(mpd, mpdFiles(xml)))) {
        await putManifest(rel(mpd), xml);
        manifests.push({ format: 'DASH', manifest: rel(mpd) });
      }
    }
    if (!announced && manifests.length === (hlsMaster ? 1 : 0) + (mpd ? 1 : 0)) {
      announced = true;
      await sink.playable(manifests);
    }
  };

  // The rung folders are made now rather than by ffmpeg, so that they are watched before its first segment: a folder
  // that appears later is watched only from the next tick, which held the first segment back up to a second.
  for (const d of new Set(media.map((m) => dirname(m)))) mkdirSync(d, { recursive: true });
  const passes = runPasses([dir, ...media.map((m) => dirname(m))], pass, sink.failed);
  return {
    stored,
    stop: () => passes.stop(),
  };
}

/**
 * Runs `pass` after every change in `folders` (watched as they appear) and once a second besides (a missed inotify
 * event, a slow disk), never two at once: a change seen during a pass asks for one more after it. A pass that throws
 * is reported and the next one tries again.
 */
export function runPasses(folders: string[], pass: () => Promise<void>, failed: (e: Error) => void): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let busy = false;
  let stopped = false;
  const kick = () => {
    if (stopped) return;
    if (busy) return void (again = true);
    busy = true;
    running = (async () => {
      do {
        again = false;
        await pass().catch((e: Error) => failed(e));
      } while (again && !stopped);
      busy = false;
    })();
  };
  const watchers = new Map<string, FSWatcher>();
  const watchFolders = () => {
    for (const d of new Set(folders)) {
      if (watchers.has(d)) continue;
      try {
        const w = watch(d, () => kick());
        w.on('error', () => {});
        watchers.set(d, w);
      } catch {
        // Not there yet: the next tick tries again, and its pass covers the meantime.
      }
    }
  };
  watchFolders();
  const timer = setInterval(() => {
    watchFolders();
    kick();
  }, FALLBACK_MS);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      for (const w of watchers.values()) w.close();
      await running;
    },
  };
}
