import { expect, it } from 'vitest';
import { ListCache } from '../../src/platform/listCache.ts';

it('keeps bodies within its byte budget, least recently used out first', () => {
  const cache = new ListCache(10);
  cache.set('a', 'aaaa');
  cache.set('b', 'bbbb');
  expect(cache.get('a')).toBe('aaaa'); // a is now the most recently used
  cache.set('c', 'cccc');
  expect(cache.get('b')).toBeUndefined();
  expect(cache.get('a')).toBe('aaaa');
  expect(cache.get('c')).toBe('cccc');
  cache.set('a', 'AAAAAA'); // replacing counts the new size only
  expect(cache.get('c')).toBe('cccc');
  expect(cache.get('a')).toBe('AAAAAA');
  cache.set('huge', 'x'.repeat(11));
  expect(cache.get('huge')).toBeUndefined();
  expect(cache.get('a')).toBe('AAAAAA');
});
