import { describe, expect, it } from 'vitest';
import { InputWatermarks, SourceWatermarks } from './watermarks';

describe('SourceWatermarks', () => {
  it('is the minimum over partitions of max timestamp − bound − 1, and skips partitions idle past the timeout', () => {
    const wm = new SourceWatermarks(10, 1_000, [0, 1], 0);
    wm.observe(0, 100, 0);
    expect(wm.poll(0)).toBeNull(); // partition 1 has no record yet: it holds the watermark at −∞
    wm.observe(1, 50, 10);
    expect(wm.poll(10)).toBe(39);
    wm.observe(0, 200, 500);
    expect(wm.poll(500)).toBeNull(); // still held by partition 1 at 39
    expect(wm.poll(1_010)).toBe(189); // partition 1 silent for 1 s: idle, no longer holds it back
    wm.observe(1, 60, 1_100); // back, but behind: the watermark never goes back
    expect(wm.poll(1_100)).toBeNull();
    expect(wm.poll(2_500)).toBe('idle'); // every partition idle
    expect(wm.poll(2_600)).toBeNull(); // said once
  });

  it('follows partitions moved away and moved in (a live rescale): time continues from the old owner, idle once emptied', () => {
    const wm = new SourceWatermarks(10, undefined, [0, 1], 0);
    wm.observe(0, 100, 0);
    wm.observe(1, 50, 0);
    expect(wm.poll(0)).toBe(39);
    expect(wm.remove(1)).toBe(50); // its highest timestamp goes to the new owner
    expect(wm.poll(0)).toBe(89); // no longer held back by partition 1
    expect(wm.remove(0)).toBe(100);
    expect(wm.poll(0)).toBe('idle'); // reads nothing any more: holds nobody's event time back
    expect(wm.poll(0)).toBeNull();

    const joiner = new SourceWatermarks(10, undefined, [], 0);
    expect(joiner.poll(0)).toBeNull(); // has never read: says nothing (its channel starts idle downstream)
    joiner.add(1, 50, 0);
    expect(joiner.poll(0)).toBe(39); // at once, before the partition's first record here
    joiner.add(3, null, 0); // a partition nobody has read yet holds it at −∞ until its first record
    joiner.observe(1, 70, 0);
    expect(joiner.poll(0)).toBeNull();
    joiner.observe(3, 80, 0);
    expect(joiner.poll(0)).toBe(59);
  });
});

describe('InputWatermarks', () => {
  it('min-combines channels, ignores idle ones, and treats ended ones as +∞', () => {
    const input = new InputWatermarks(3);
    expect(input.onWatermark(0, 10)).toBeNull();
    expect(input.onWatermark(1, 5)).toBeNull();
    expect(input.onWatermark(2, 7)).toBe(5);
    expect(input.onIdle(1)).toBe(7);
    expect(input.allIdle).toBe(false);
    expect(input.onWatermark(1, 6)).toBeNull(); // active again, and behind: no regression
    expect(input.onWatermark(1, 20)).toBeNull(); // min(10, 20, 7) = 7 already
    expect(input.onEnd(2)).toBe(10);
    expect(input.onIdle(0)).toBe(20);
    expect(input.onIdle(1)).toBeNull();
    expect(input.allIdle).toBe(true);
    expect(input.onEnd(0)).toBeNull();
    expect(input.onEnd(1)).toBe(Number.POSITIVE_INFINITY);
    expect(input.allEnded).toBe(true);
  });
});
