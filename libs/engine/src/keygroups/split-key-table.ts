/**
 * The lookup both split routers share (the engine's KeySplits, the partitioner's SplitRouter): per split key — named
 * as the heavy-key sketch names it, String(key), within its own key group — a weighted choice among targets (key
 * groups for the engine, subtasks for the planner). Built once per table, read per record: one typed-array read for
 * a key group without a split key, no allocation, no await.
 */
import type { KeyValue } from './key-serde';
import { fillWeightedSlots, SLOTS, slotOf } from './weighted-slots';

export interface WeightedSplit {
  readonly key: string;
  readonly keyGroup: number;
  /** Each below 65,536; non-negative weights summing to 1, one per target (the caller checks). */
  readonly targets: readonly number[];
  readonly weights: readonly number[];
}

export class SplitKeyTable {
  private constructor(
    /** key group → index of its first split key, or -1 when none of its keys is split. */
    private readonly firstSplit: Int32Array,
    private readonly splitsInGroup: Int32Array,
    private readonly keyText: readonly string[],
    /** The split key as a number, for records whose key is a number; NaN otherwise. */
    private readonly keyNumber: Float64Array,
    /** SLOTS targets per split key, each appearing in proportion to its weight. */
    private readonly slots: Uint16Array,
  ) {}

  static of(splits: readonly WeightedSplit[], maxParallelism: number): SplitKeyTable {
    const sorted = [...splits].sort((a, b) => a.keyGroup - b.keyGroup || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const firstSplit = new Int32Array(maxParallelism).fill(-1);
    const splitsInGroup = new Int32Array(maxParallelism);
    const keyNumber = new Float64Array(sorted.length);
    const slots = new Uint16Array(sorted.length * SLOTS);
    sorted.forEach((split, i) => {
      if (firstSplit[split.keyGroup] === -1) firstSplit[split.keyGroup] = i;
      splitsInGroup[split.keyGroup]++;
      const asNumber = Number(split.key);
      keyNumber[i] = split.key !== '' && String(asNumber) === split.key ? asNumber : NaN;
      fillWeightedSlots(slots.subarray(i * SLOTS, (i + 1) * SLOTS), split.targets, split.weights);
    });
    return new SplitKeyTable(firstSplit, splitsInGroup, sorted.map((s) => s.key), keyNumber, slots);
  }

  /** True when at least one key of the key group is split. */
  hasSplitKey(keyGroup: number): boolean {
    return (this.firstSplit[keyGroup] ?? -1) >= 0;
  }

  /** A split key's target for the record numbered `sequence` (any integer stable for it); -1 when `key` is not split. */
  pick(key: KeyValue, keyGroup: number, sequence: number): number {
    const first = this.firstSplit[keyGroup];
    if (first === undefined || first < 0) return -1;
    const end = first + this.splitsInGroup[keyGroup];
    for (let i = first; i < end; i++) {
      if (typeof key === 'string' ? key === this.keyText[i] : key === this.keyNumber[i]) return this.slots[i * SLOTS + slotOf(sequence)];
    }
    return -1;
  }
}
