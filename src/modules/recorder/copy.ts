import type { PlatformContext } from '../../context.ts';

/** Copies one object inside the store (never re-encoded, its bytes never pass through here); answers its size. */
export async function copyObject(ctx: PlatformContext, from: string, to: string): Promise<number> {
  return (await ctx.store.copy(from, to)).size;
}

/** Runs `work` over `items`, `limit` at a time. */
export async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}
