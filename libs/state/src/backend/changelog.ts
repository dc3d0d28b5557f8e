import type { KeyGroup } from '../contract';
import { keyGroupOfId } from '../keys/key-layout';
import { writeKeyGroupChanges } from '../snapshot/key-group-changes';

/** Default materialisation period: each key group's full image is re-taken about every 40 checkpoints. */
export const DEFAULT_MATERIALIZE_EVERY = 40;

export interface ChangelogOptions {
  /**
   * A key group's chain (full image + changes) is cut short by a new full image at least every this many
   * checkpoints; key groups take turns (key group k on checkpoints ≡ k mod N), so the re-uploads are spread evenly
   * instead of landing on one checkpoint. Upload per checkpoint ≈ changed share + 1/N of the state; a restore
   * reads at most N changes images per key group.
   */
  readonly materializeEvery?: number;
  /**
   * Key groups whose first restoreKeyGroup restores the image a stored chain ends with (recovery from the job's
   * latest checkpoint, same subtask): the changelog continues that chain instead of asking for a full image.
   */
  readonly continueFrom?: readonly KeyGroup[];
}

/** What a checkpoint takes for one key group: its full image, or the changes since the previous checkpoint. */
export type KeyGroupCheckpointPlan =
  | {
      readonly keyGroup: KeyGroup;
      readonly kind: 'full';
      /**
       * The writes since the previous checkpoint when the key group was tracked through it (null otherwise): an
       * image of the previous cut plus these is this cut's image. The Map is also the token prebuiltTurns handed out.
       */
      readonly since: ReadonlyMap<string, Buffer | null> | null;
    }
  | { readonly keyGroup: KeyGroup; readonly kind: 'changes'; readonly image: Buffer | null };

interface Tracked {
  /** Changes images taken since the last full image. */
  chain: number;
  baseBytes: number;
  changeBytes: number;
  /** Writes flushed since the previous checkpoint, by cache id: the last one wins (null: deleted). */
  changes: Map<string, Buffer | null>;
  /** Restored, not yet in any checkpoint: the next one takes a full image (the restored one plus `changes`). */
  unstored?: true;
}

/**
 * The keyed state backend's changelog (Flink's changelog state backend, per key group): every write the write-back
 * cache flushes is also recorded here, for key groups that have a full image in an earlier checkpoint, so a
 * checkpoint can hand over only what changed. A key group whose state was replaced wholesale (restored, adopted,
 * dropped, copied into) is forgotten and takes a full image next time; so is one whose changes outgrew its image.
 */
export class Changelog {
  private readonly tracked = new Map<KeyGroup, Tracked>();
  private readonly every: number;
  private checkpoints = 0;
  private fullRequested = false;
  private readonly continuing: Set<KeyGroup>;

  constructor(options: ChangelogOptions = {}) {
    this.continuing = new Set(options.continueFrom ?? []);
    this.every = options.materializeEvery ?? DEFAULT_MATERIALIZE_EVERY;
    if (!Number.isInteger(this.every) || this.every < 1) throw new RangeError(`materializeEvery must be a positive integer, got ${this.every}`);
  }

  /** A flushed write (value null: a delete). Cheap for key groups with no base: nothing is kept for them. */
  record(id: string, value: Buffer | null): void {
    const tracked = this.tracked.get(keyGroupOfId(id));
    if (tracked !== undefined) tracked.changes.set(id, value);
  }

  /** The key group's state was replaced or removed outside the write path: its next checkpoint takes a full image. */
  forget(keyGroup: KeyGroup): void {
    this.tracked.delete(keyGroup);
  }

  /**
   * restoreKeyGroup replaced the key group: a continued chain's end (once, see continueFrom; returns null), else a
   * state no checkpoint holds yet, whose writes are tracked from here so that the next checkpoint's full image can
   * be the restored image plus them. Returns the token (see upcomingTurns) that image is valid with.
   */
  restored(keyGroup: KeyGroup, imageBytes: number): object | null {
    if (this.continuing.delete(keyGroup)) {
      this.rebased(keyGroup, imageBytes);
      return null;
    }
    const changes = new Map<string, Buffer | null>();
    this.tracked.set(keyGroup, { chain: 0, baseBytes: imageBytes, changeBytes: 0, changes, unstored: true });
    return changes;
  }

  forgetRange(start: KeyGroup, end: KeyGroup): void {
    for (const kg of [...this.tracked.keys()]) if (kg >= start && kg <= end) this.tracked.delete(kg);
  }

  /** The next checkpoint takes full images of every key group (a checkpoint's changes were lost on the way). */
  requestFull(): void {
    this.fullRequested = true;
  }

  /**
   * Decides, for each key group of the checkpoint, full image or changes, and takes the changes (the changelog
   * starts afresh for them). Key groups not in `keyGroups` left this backend: they are forgotten.
   */
  plan(keyGroups: readonly KeyGroup[]): KeyGroupCheckpointPlan[] {
    const checkpoint = this.checkpoints++;
    const owned = new Set(keyGroups);
    for (const kg of [...this.tracked.keys()]) if (!owned.has(kg)) this.tracked.delete(kg);
    const full = this.fullRequested;
    this.fullRequested = false;
    return keyGroups.map((keyGroup): KeyGroupCheckpointPlan => {
      const t = this.tracked.get(keyGroup);
      const turn = checkpoint % this.every === keyGroup % this.every;
      if (full || t === undefined || t.unstored || t.chain >= this.every || (turn && t.chain > 0) || t.changeBytes >= t.baseBytes) {
        return { keyGroup, kind: 'full', since: t?.changes ?? null };
      }
      if (t.changes.size === 0) return { keyGroup, kind: 'changes', image: null };
      const image = writeKeyGroupChanges(keyGroup, t.changes);
      t.changes = new Map();
      t.chain++;
      t.changeBytes += image.length;
      return { keyGroup, kind: 'changes', image };
    });
  }

  /**
   * Right after a checkpoint: the tracked key groups whose turn comes at the next one, each with a token (the Map
   * their writes since this cut go to). An image of this cut built meanwhile is valid at the next checkpoint if
   * plan then hands back the same token as `since` (nothing replaced the key group in between).
   */
  upcomingTurns(keyGroups: readonly KeyGroup[]): { keyGroup: KeyGroup; token: object }[] {
    const out: { keyGroup: KeyGroup; token: object }[] = [];
    for (const keyGroup of keyGroups) {
      const t = this.tracked.get(keyGroup);
      if (t !== undefined && this.checkpoints % this.every === keyGroup % this.every) out.push({ keyGroup, token: t.changes });
    }
    return out;
  }

  /** A full image of `keyGroup` was taken (after plan said so): the changelog follows it from here. */
  rebased(keyGroup: KeyGroup, imageBytes: number): void {
    this.tracked.set(keyGroup, { chain: 0, baseBytes: imageBytes, changeBytes: 0, changes: new Map() });
  }
}
