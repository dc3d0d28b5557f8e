import { describe, expect, it } from 'vitest';
import { BroadcastAlignment } from './broadcast-alignment';

const item = (partition: number, name: string) => ({ partition, name });

describe('BroadcastAlignment', () => {
  it('holds every partition that delivered the broadcast until all did, then hands back what waited, in order', () => {
    const a = new BroadcastAlignment<{ partition: number; name: string }>();
    expect(a.idle).toBe(true);
    expect(a.arrive(3, 1, 0n)).toBe(false);
    expect(a.isBlocked(3)).toBe(true);
    expect(a.isBlocked(4)).toBe(false);
    a.hold(item(3, 'after-in-3'));
    expect(a.complete([3, 4], () => false)).toBeNull();
    a.arrive(4, 1, 0n);
    a.hold(item(4, 'after-in-4'));
    const done = a.complete([3, 4], () => false);
    expect(done?.seq).toBe(1);
    expect(done?.held.map((i) => i.name)).toEqual(['after-in-3', 'after-in-4']);
    expect(a.idle).toBe(true);
  });

  it('counts ended and released partitions, and marks a newer broadcast for replay', () => {
    const a = new BroadcastAlignment<{ partition: number; name: string }>();
    a.arrive(0, 5, 0n);
    expect(a.arrive(1, 6, 0n)).toBe(true); // partition 1 delivers a newer one: it counts for 5, and is replayed after it
    a.hold(item(2, 'gone'));
    a.forget(2);
    expect(a.heldOf(2)).toEqual([]);
    expect(a.complete([0, 1, 2, 3], (p) => p === 3)).toBeNull(); // partition 2 still counts while read
    expect(a.complete([0, 1, 3], (p) => p === 3)?.seq).toBe(5);
  });
});
