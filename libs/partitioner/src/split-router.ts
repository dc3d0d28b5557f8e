/**
 * Which subtask a keyed record goes to under a layout: its key group's owner, unless its key is split, in which case
 * one of the key's subtasks by weight. Built once per layout (per decision), called for every record on the engine's
 * hot path: no allocation, no await, no Map lookup for records of key groups without a split key (one typed-array
 * read decides that).
 *
 * A split key's part is chosen from the record's `sequence`, a number the caller supplies that is stable for the
 * record (its source offset, or a per-subtask record counter): the same sequence always picks the same subtask, and
 * consecutive sequences are spread over the weights by a golden-ratio (Weyl) sequence, so even a short run of one
 * key's records lands in proportion to the weights instead of by chance.
 */
import { fillWeightedSlots, type KeyValue, SLOTS, slotOf } from '@weir/engine';
import { checkLayout, type PartitionLayout } from './layout';

export class SplitRouter {
  private constructor(
    readonly layout: PartitionLayout,
    private readonly owners: Int32Array,
    /** key group → index of its first split key, or -1 when none of its keys is split. */
    private readonly firstSplit: Int32Array,
    private readonly splitsInGroup: Int32Array,
    private readonly keyText: readonly string[],
    /** The split key as a number, for records whose key is a number (the sketch saw String(key)); NaN otherwise. */
    private readonly keyNumber: Float64Array,
    /** SLOTS subtasks per split key, each appearing in proportion to its weight. */
    private readonly slots: Uint16Array,
  ) {}

  /** Throws PartitionerInputError when the layout breaks its invariants (see checkLayout). */
  static fromLayout(layout: PartitionLayout): SplitRouter {
    checkLayout(layout);
    const maxParallelism = layout.owners.length;
    const splits = [...layout.splits].sort((a, b) => a.keyGroup - b.keyGroup || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const firstSplit = new Int32Array(maxParallelism).fill(-1);
    const splitsInGroup = new Int32Array(maxParallelism);
    const keyNumber = new Float64Array(splits.length);
    const slots = new Uint16Array(splits.length * SLOTS);
    splits.forEach((split, i) => {
      if (firstSplit[split.keyGroup] === -1) firstSplit[split.keyGroup] = i;
      splitsInGroup[split.keyGroup]++;
      const asNumber = Number(split.key);
      keyNumber[i] = split.key !== '' && String(asNumber) === split.key ? asNumber : NaN;
      fillWeightedSlots(slots.subarray(i * SLOTS, (i + 1) * SLOTS), split.subtasks, split.weights);
    });
    return new SplitRouter(
      layout,
      Int32Array.from(layout.owners),
      firstSplit,
      splitsInGroup,
      splits.map((s) => s.key),
      keyNumber,
      slots,
    );
  }

  /** The subtask for one record: `keyGroup` is keyGroupOfKey(key), `sequence` any integer stable for the record. */
  route(key: KeyValue, keyGroup: number, sequence: number): number {
    const first = this.firstSplit[keyGroup];
    if (first < 0) return this.owners[keyGroup];
    const end = first + this.splitsInGroup[keyGroup];
    for (let i = first; i < end; i++) {
      if (typeof key === 'string' ? key === this.keyText[i] : key === this.keyNumber[i]) {
        return this.slots[i * SLOTS + slotOf(sequence)];
      }
    }
    return this.owners[keyGroup];
  }

  /** True when at least one key of the key group is split (its records may leave its owner). */
  hasSplitKey(keyGroup: number): boolean {
    return this.firstSplit[keyGroup] >= 0;
  }

  /** The subtasks that hold state for a key: its split's subtasks, or its key group's owner. Allocates. */
  holdersOf(key: KeyValue, keyGroup: number): number[] {
    const split = this.layout.splits.find((s) => s.keyGroup === keyGroup && (s.key === key || (typeof key === 'number' && s.key === String(key))));
    return split ? [...split.subtasks] : [this.owners[keyGroup]];
  }
}
