import type { PlatformContext } from '../../context.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';

/** Reads a whole object (segments and playlists are small). */
export async function readObject(ctx: PlatformContext, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await ctx.store.getStream(key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Copies one object byte for byte (never re-encoded); answers its size. */
export async function copyObject(ctx: PlatformContext, from: string, to: string): Promise<number> {
  const body = await readObject(ctx, from);
  await ctx.store.putObject(to, body, contentTypeOf(to));
  return body.length;
}

/** Runs `work` over `items`, `limit` at a time. */
export async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}
