/**
 * Which subtask a keyed record goes to under a layout: its key group's owner, unless its key is split, in which case
 * one of the key's subtasks by weight: the planner's view of routing, per record where a layout is simulated
 * (`npm run bench -- skew`). The engine routes by key group (KeySplits) over the same SplitKeyTable: no allocation,
 * no await, one typed-array read for records of key groups without a split key.
 *
 * A split key's part is chosen from the record's `sequence`, a number the caller supplies that is stable for the
 * record (its source offset, or a per-subtask record counter): the same sequence always picks the same subtask, and
 * consecutive sequences are spread over the weights by a golden-ratio (Weyl) sequence, so even a short run of one
 * key's records lands in proportion to the weights instead of by chance.
 */
import { type KeyValue, SplitKeyTable } from '@weir/engine';
import { checkLayout, type PartitionLayout } from './layout';

export class SplitRouter {
  private constructor(
    readonly layout: PartitionLayout,
    private readonly owners: Int32Array,
    private readonly table: SplitKeyTable,
  ) {}

  /** Throws PartitionerInputError when the layout breaks its invariants (see checkLayout). */
  static fromLayout(layout: PartitionLayout): SplitRouter {
    checkLayout(layout);
    const splits = layout.splits.map((s) => ({ key: s.key, keyGroup: s.keyGroup, targets: s.subtasks, weights: s.weights }));
    return new SplitRouter(layout, Int32Array.from(layout.owners), SplitKeyTable.of(splits, layout.owners.length));
  }

  /** The subtask for one record: `keyGroup` is keyGroupOfKey(key), `sequence` any integer stable for the record. */
  route(key: KeyValue, keyGroup: number, sequence: number): number {
    const subtask = this.table.pick(key, keyGroup, sequence);
    return subtask < 0 ? this.owners[keyGroup] : subtask;
  }

  /** True when at least one key of the key group is split (its records may leave its owner). */
  hasSplitKey(keyGroup: number): boolean {
    return this.table.hasSplitKey(keyGroup);
  }

  /** The subtasks that hold state for a key: its split's subtasks, or its key group's owner. Allocates. */
  holdersOf(key: KeyValue, keyGroup: number): number[] {
    const split = this.layout.splits.find((s) => s.keyGroup === keyGroup && (s.key === key || (typeof key === 'number' && s.key === String(key))));
    return split ? [...split.subtasks] : [this.owners[keyGroup]];
  }
}
