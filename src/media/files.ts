import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { contentTypeOf } from '../storage/contentTypes.ts';

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
