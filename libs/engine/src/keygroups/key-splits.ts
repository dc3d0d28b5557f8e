/**
 * Hot keys split over several key groups: the records of a split key go, by weight, to the key groups named as its
 * parts instead of all to its own, so that their owners (other subtasks) share its load. Only a splittable window
 * reads a split key (sdk/windows.ts): each part keeps a partial window in the key group it lands in, snapshotted,
 * moved and restored with that key group like any state, and the partials are merged per key and window downstream.
 * Where a record lands therefore never changes a result, only who does the work: a table may change at any moment,
 * differ between processes for a while, or be lost in a restore.
 *
 * Built once per change, consulted per record on the keyBy path: one boolean when nothing is split, one typed-array
 * read for a key group without a split key, no allocation, no await.
 */
import { fillWeightedSlots, SLOTS, slotOf } from './weighted-slots';
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
  static readonly NONE = new KeySplits([], new Int32Array(0), new Int32Array(0), [], new Float64Array(0), new Uint16Array(0));

  private constructor(
    readonly splits: readonly KeySplit[],
    /** key group → index of its first split key, or -1. */
    private readonly firstSplit: Int32Array,
    private readonly splitsInGroup: Int32Array,
    private readonly keyText: readonly string[],
    /** The split key as a number, for records whose key is a number; NaN otherwise. */
    private readonly keyNumber: Float64Array,
    /** SLOTS key groups per split key, each appearing in proportion to its weight. */
    private readonly slots: Uint16Array,
  ) {}

  /** Throws KeySplitError naming what is wrong with the first bad split. */
  static of(splits: readonly KeySplit[], maxParallelism: number): KeySplits {
    if (splits.length === 0) return KeySplits.NONE;
    checkSplits(splits, maxParallelism);
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
      fillWeightedSlots(slots.subarray(i * SLOTS, (i + 1) * SLOTS), split.parts, split.weights);
    });
    return new KeySplits(sorted, firstSplit, splitsInGroup, sorted.map((s) => s.key), keyNumber, slots);
  }

  get isEmpty(): boolean {
    return this.splits.length === 0;
  }

  /** The key group a record of `key` (whose own key group is `keyGroup`) goes to; `sequence` any integer stable for it. */
  route(key: KeyValue, keyGroup: number, sequence: number): number {
    const first = this.firstSplit[keyGroup];
    if (first === undefined || first < 0) return keyGroup;
    const end = first + this.splitsInGroup[keyGroup];
    for (let i = first; i < end; i++) {
      if (typeof key === 'string' ? key === this.keyText[i] : key === this.keyNumber[i]) return this.slots[i * SLOTS + slotOf(sequence)];
    }
    return keyGroup;
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
