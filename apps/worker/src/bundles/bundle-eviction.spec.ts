import { describe, expect, it } from 'vitest';
import { chooseEvictions, type CachedBundle } from './bundle-eviction';

const file = (name: string, size: number, mtimeMs: number): CachedBundle => ({ name, size, mtimeMs });
const none = new Set<string>();

describe('chooseEvictions', () => {
  it('deletes nothing while the cache fits', () => {
    const files = [file('a.js', 40, 1), file('b.js', 60, 2)];
    expect(chooseEvictions({ files, inUse: none, justFetched: 'b.js', maxBytes: 100 })).toEqual([]);
  });

  it('deletes the least recently used first, and only as many as it takes to fit', () => {
    const files = [file('new.js', 30, 9), file('mid.js', 30, 5), file('old.js', 30, 1), file('oldest.js', 30, 0)];
    expect(chooseEvictions({ files, inUse: none, justFetched: 'new.js', maxBytes: 70 })).toEqual(['oldest.js', 'old.js']);
  });

  it('never deletes a bundle in use nor the one just fetched, however old', () => {
    const files = [file('running.js', 50, 0), file('fetched.js', 50, 1), file('idle.js', 50, 5)];
    const inUse = new Set(['running.js']);
    expect(chooseEvictions({ files, inUse, justFetched: 'fetched.js', maxBytes: 100 })).toEqual(['idle.js']);
  });

  it('keeps a bundle larger than the cap, deleting everything else', () => {
    const files = [file('huge.js', 500, 9), file('a.js', 10, 1), file('b.js', 10, 2)];
    expect(chooseEvictions({ files, inUse: none, justFetched: 'huge.js', maxBytes: 100 })).toEqual(['a.js', 'b.js']);
  });

  it('stays over the cap when what must stay exceeds it', () => {
    const files = [file('running.js', 80, 0), file('fetched.js', 80, 1)];
    const inUse = new Set(['running.js']);
    expect(chooseEvictions({ files, inUse, justFetched: 'fetched.js', maxBytes: 100 })).toEqual([]);
  });

  it('breaks ties in recency by name, so that the choice is stable', () => {
    const files = [file('b.js', 50, 1), file('a.js', 50, 1), file('c.js', 50, 2)];
    expect(chooseEvictions({ files, inUse: none, justFetched: 'c.js', maxBytes: 100 })).toEqual(['a.js']);
  });
});
