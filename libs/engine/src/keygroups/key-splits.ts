/**
 * Hot keys split over several key groups: the records of a split key go, by weight, to the key groups named as its
 * parts instead of all to its own, so that their owners (other subtasks) share its load. Only a splittable window
 * reads a split key (sdk/windows.ts): each part keeps a partial window in the key group it lands in, snapshotted,
 * moved and restored with that key group like any state, and the partials are merged per key and window downstream.
 * Where a record lands therefore never changes a result, only who does the work: a table may change at any moment,
 * differ between processes for a while, or be lost in a restore.
 *
 * Built once per change, consulted per record on the keyBy path: one boolean when nothing is split, then the shared
 * SplitKeyTable (one typed-array read for a key group without a split key, no allocation, no await).
 */
import { SplitKeyTable } from './split-key-table';
import type { ReportedKeySplit } from '@weir/metrics';
import type { KeyValue } from './key-serde';

export class KeySplitError extends Error {
  override readonly name = 'KeySplitError';
}

/**
 * One split key: `weights[i]` of its records go to key group `parts[i]`; the key as the heavy-key sketch names it
 * (String(key)) and its own key group (keyGroupOfKey). The shape subtasks report it in (libs/metrics), so a table
 * goes from the engine to the control plane and back as it is.
 */
export type KeySplit = ReportedKeySplit;

export class KeySplits {
  static readonly NONE = new KeySplits([], SplitKeyTable.of([], 0));

  private constructor(
    readonly splits: readonly KeySplit[],
    private readonly table: SplitKeyTable,
  ) {}

  /** Throws KeySplitError naming what is wrong with the first bad split. */
  static of(splits: readonly KeySplit[], maxParallelism: number): KeySplits {
    if (splits.length === 0) return KeySplits.NONE;
    checkSplits(splits, maxParallelism);
    const table = SplitKeyTable.of(splits.map((s) => ({ key: s.key, keyGroup: s.keyGroup, targets: s.parts, weights: s.weights })), maxParallelism);
    return new KeySplits(splits, table);
  }

  get isEmpty(): boolean {
    return this.splits.length === 0;
  }

  /** The key group a record of `key` (whose own key group is `keyGroup`) goes to; `sequence` any integer stable for it. */
  route(key: KeyValue, keyGroup: number, sequence: number): number {
    const part = this.table.pick(key, keyGroup, sequence);
    return part < 0 ? keyGroup : part;
  }
}

function checkSplits(splits: readonly KeySplit[], maxParallelism: number): void {
  const inRange = (kg: number) => Number.isInteger(kg) && kg >= 0 && kg < maxParallelism;
  const seen = new Set<string>();
  for (const split of splits) {
    const name = `split key "${split.key}" (key group ${split.keyGroup})`;
    if (typeof split.key !== 'string') throw new KeySplitError(`${name}: the key must be given as a string (String(key))`);
    if (!inRange(split.keyGroup)) throw new KeySplitError(`${name}: key group outside [0, ${maxParallelism})`);
    const id = `${split.keyGroup}\u0000${split.key}`;
    if (seen.has(id)) throw new KeySplitError(`${name} is listed twice`);
    seen.add(id);
    if (split.parts.length < 2 || split.parts.length !== split.weights.length) {
      throw new KeySplitError(`${name}: needs at least two parts and one weight per part, got ${split.parts.length} parts and ${split.weights.length} weights`);
    }
    if (new Set(split.parts).size !== split.parts.length || !split.parts.every(inRange)) {
      throw new KeySplitError(`${name}: parts [${split.parts.join(', ')}] must be distinct key groups in [0, ${maxParallelism})`);
    }
    const sum = split.weights.reduce((a, w) => a + w, 0);
    if (split.weights.some((w) => !(w >= 0)) || Math.abs(sum - 1) > 1e-6) {
      throw new KeySplitError(`${name}: weights [${split.weights.join(', ')}] must be ≥ 0 and sum to 1`);
    }
  }
}
