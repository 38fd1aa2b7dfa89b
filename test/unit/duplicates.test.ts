import { detectClones } from 'jscpd';
import { expect, it } from 'vitest';

/**
 * Shared logic lives once (issue 26): a block of 70 tokens or more that appears twice in `src/` is a helper to write,
 * not a copy to keep. Route schemas are left out: operations of different modules often have bodies of one shape,
 * which the spec defines apart.
 */
it('no block of code is copied inside src/', async () => {
  const clones = await detectClones({
    path: [new URL('../../src', import.meta.url).pathname],
    format: ['typescript'],
    minTokens: 70,
    ignore: ['**/*.schemas.ts', '**/schemas.ts'],
    silent: true,
    reporters: [],
  } as Parameters<typeof detectClones>[0]);
  const where = (d: { sourceId: string; start: { line: number }; end: { line: number } }) =>
    `${d.sourceId.replace(/.*\/src\//, 'src/')}:${d.start.line}-${d.end.line}`;
  expect(clones.map((c) => `${where(c.duplicationA)} = ${where(c.duplicationB)}`)).toEqual([]);
}, 120_000);
