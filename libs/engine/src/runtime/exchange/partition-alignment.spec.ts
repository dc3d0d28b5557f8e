import { describe, expect, it } from 'vitest';
import { PartitionAlignment } from './partition-alignment';

interface Item {
  readonly partition: number;
  readonly offset: bigint;
  readonly name: string;
}
const item = (partition: number, offset: number, name: string): Item => ({ partition, offset: BigInt(offset), name });
const none = () => false;

describe('PartitionAlignment', () => {
  it('completes a lane once every partition delivered its barrier, handing back what waited, in order', () => {
    const a = new PartitionAlignment<Item>();
    expect(a.idle).toBe(true);
    a.arrive(0, 'd1', 7);
    expect(a.idle).toBe(false);
    expect(a.isBlocked(0, 'd1')).toBe(true);
    expect(a.isBlocked(0, 'd2')).toBe(false); // other channels of the partition flow on
    expect(a.isBlocked(1, 'd1')).toBe(false);
    a.hold('d1', item(0, 5, 'after-barrier-0'));
    expect(a.complete('d1', [0, 1], none)).toBeNull();
    a.arrive(1, 'd1', 7);
    a.hold('d1', item(1, 9, 'after-barrier-1'));
    const done = a.complete('d1', [0, 1], none);
    expect(done?.checkpointId).toBe(7);
    expect(done?.replay.map((i) => i.name)).toEqual(['after-barrier-0', 'after-barrier-1']);
    expect(a.idle).toBe(true);
    expect(a.isBlocked(0, 'd1')).toBe(false);
  });

  it('counts an ended partition as arrived, and forgets a released one', () => {
    const a = new PartitionAlignment<Item>();
    a.arrive(0, 'b0', 3);
    expect(a.complete('b0', [0, 1], (p) => p === 1)?.checkpointId).toBe(3);

    a.arrive(0, 'd0', 4);
    a.hold('d0', item(0, 11, 'x'));
    a.hold('d0', item(0, 12, 'y'));
    expect(a.firstHeldOffset(0)).toBe(11n);
    a.forget(0);
    expect(a.firstHeldOffset(0)).toBeUndefined();
    expect(a.complete('d0', [1], none)).toBeNull(); // partition 1 still owes its barrier
  });

  it('takes a newer barrier from a partition as arrival for the older one, to be replayed after it', () => {
    const a = new PartitionAlignment<Item>();
    a.arrive(0, 'd0', 5);
    expect(a.arrive(1, 'd0', 6).holdThis).toBe(true);
    expect(a.arrive(1, 'd0', 4).holdThis).toBe(false); // stale
    expect(a.complete('d0', [0, 1], none)?.checkpointId).toBe(5);
  });
});
