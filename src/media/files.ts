import { readdir, stat } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.mpd': 'application/dash+xml',
  '.ts': 'video/mp2t',
  '.m4s': 'video/mp4',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.vtt': 'text/vtt',
  '.jpg': 'image/jpeg',
  '.png': 'image/png',
};

/** The Content-Type an output file is stored and served with. */
export const contentTypeOf = (name: string): string => CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';

export interface OutputFile {
  /** Path inside the listed directory, `/`-separated: the object key suffix when uploading. */
  path: string;
  absolutePath: string;
  size: number;
  contentType: string;
}

/** Every file under `dir`, recursively, manifests last so a reader of the store never finds one before its segments. */
export async function listFiles(dir: string): Promise<OutputFile[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: OutputFile[] = [];
  for (const e of entries) {
    if (!e.isFile()) continue;
    const absolutePath = join(e.parentPath, e.name);
    files.push({
      path: relative(dir, absolutePath).split('\\').join('/'),
      absolutePath,
      size: (await stat(absolutePath)).size,
      contentType: contentTypeOf(e.name),
    });
  }
  const manifest = (f: OutputFile) => /\.(m3u8|mpd)$/.test(f.path);
  return files.sort((a, b) => Number(manifest(a)) - Number(manifest(b)) || a.path.localeCompare(b.path));
}

/** Total bytes under `dir` (an endpoint's `size`). */
export const directorySize = async (dir: string): Promise<number> => (await listFiles(dir)).reduce((sum, f) => sum + f.size, 0);
