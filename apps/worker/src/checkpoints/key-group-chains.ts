/**
 * Incremental keyed state in checkpoints: each key group is a chain of a full image (`kg-<n>`) and the changes
 * images taken after it. One checkpoint adds, per keyed subtask, the new full images (the key groups whose turn it
 * was, or that arrived) and ONE packed blob of every other changed key group's changes (`changes-<checkpointId>`);
 * every other link of the chains is referenced again from the previous checkpoint without being uploaded. A
 * `chain` blob says which full image and which changes blobs each key group needs, so a restore (at any
 * parallelism) rebuilds each key group's full image (composeKeyGroupImage).
 */
import type { CheckpointManifest, CheckpointPartInput, DownloadedCheckpoint, ManifestFileRef } from '@weir/checkpoint';
import { isChangesImage } from '@weir/state';
import { pack } from 'msgpackr';

export const CHAIN = 'chain';
export const CHAIN_VERSION = 1;
export const FULL_PREFIX = 'kg-';
export const CHANGES_PREFIX = 'changes-';

/** The `chain` blob: per key group the checkpoint of its full image; the changes blobs, oldest first. */
export interface ChainIndex {
  readonly version: number;
  readonly bases: Readonly<Record<string, number>>;
  readonly changes: readonly number[];
}

/** The chain of a keyed part no longer matches what its backend hands over (a lost cut, another writer). */
export class ChainBrokenError extends Error {
  override readonly name = 'ChainBrokenError';
}

interface PartChain {
  /** Key group → checkpoint id of its full image. */
  readonly bases: Map<number, number>;
  /** Checkpoint ids of changes blobs still needed, ascending. */
  changes: number[];
  /** Links a completed checkpoint stored (referenced again, never re-uploaded). */
  stored: Map<string, ManifestFileRef>;
  /** Links not yet in a completed checkpoint (their bytes, kept until one completes). */
  readonly pending: Map<string, Uint8Array>;
}

/** A stored chain a restored job continues: one keyed part of the checkpoint it restored from. */
export interface ChainSeed {
  readonly operatorId: string;
  readonly subtask: number;
  readonly index: ChainIndex;
  readonly refs: readonly ManifestFileRef[];
}

/** The chains of a downloaded checkpoint, to continue after recovering from it (same job, same subtasks). */
export function chainSeedsOf(downloaded: DownloadedCheckpoint): ChainSeed[] {
  const seeds: ChainSeed[] = [];
  for (const part of downloaded.parts) {
    const chain = part.metadata[CHAIN];
    if (!chain) continue;
    const index = JSON.parse(chain.toString('utf8')) as ChainIndex;
    if (index.version !== CHAIN_VERSION) continue;
    const refs = downloaded.manifest.operators.find((o) => o.operatorId === part.operatorId)?.subtasks.find((s) => s.subtask === part.subtask)?.metadata ?? [];
    seeds.push({ operatorId: part.operatorId, subtask: part.subtask, index, refs });
  }
  return seeds;
}

export class KeyGroupChains {
  private readonly parts = new Map<string, PartChain>();

  /**
   * Continues stored chains (the backends were told to: `changelog.continueFrom`, the same key groups). A key group
   * the new subtask does not own is dropped at the first checkpoint, one it owns that no seed has gets a full image.
   */
  constructor(seeds: readonly ChainSeed[] = []) {
    for (const seed of seeds) {
      const bases = new Map(Object.entries(seed.index.bases).map(([kg, c]) => [Number(kg), c]));
      const live = new Set([...[...bases.keys()].map((kg) => `${FULL_PREFIX}${kg}`), ...seed.index.changes.map((c) => `${CHANGES_PREFIX}${c}`)]);
      this.parts.set(`${seed.operatorId}/${seed.subtask}`, {
        bases,
        changes: [...seed.index.changes],
        stored: new Map(seed.refs.filter((r) => live.has(r.name)).map((r) => [r.name, r])),
        pending: new Map(),
      });
    }
  }

  /**
   * Adds one keyed subtask's images of checkpoint `checkpointId` to its chains and returns what the checkpoint part
   * holds: the new links as bytes, the stored ones by reference, and the chain index.
   */
  partOf(
    checkpointId: number,
    operatorId: string,
    subtask: number,
    images: ReadonlyMap<number, Uint8Array>,
    owned: readonly number[],
  ): Pick<CheckpointPartInput, 'metadata' | 'reusedMetadata'> & { metadata: Record<string, Uint8Array> } {
    const id = `${operatorId}/${subtask}`;
    let chain = this.parts.get(id);
    if (!chain) this.parts.set(id, (chain = { bases: new Map(), changes: [], stored: new Map(), pending: new Map() }));
    const changed: [number, Uint8Array][] = [];
    for (const [kg, image] of images) {
      if (isChangesImage(image)) {
        changed.push([kg, image]);
        continue;
      }
      chain.bases.set(kg, checkpointId);
      chain.stored.delete(`${FULL_PREFIX}${kg}`);
      chain.pending.set(`${FULL_PREFIX}${kg}`, image);
    }
    for (const [kg] of changed) {
      if (!chain.bases.has(kg)) throw new ChainBrokenError(`${id}: changes of key group ${kg} without a full image to apply them to`);
    }
    if (changed.length > 0) {
      chain.changes.push(checkpointId);
      chain.pending.set(`${CHANGES_PREFIX}${checkpointId}`, pack(changed.map(([kg, image]) => [kg, Buffer.from(image.buffer, image.byteOffset, image.byteLength)])));
    }
    const own = new Set(owned);
    for (const kg of [...chain.bases.keys()]) {
      if (own.has(kg)) continue;
      chain.bases.delete(kg);
      this.drop(chain, `${FULL_PREFIX}${kg}`);
    }
    for (const kg of own) if (!chain.bases.has(kg)) throw new ChainBrokenError(`${id}: key group ${kg} has no full image`);
    // A changes blob is needed while some key group's full image is older than it.
    const oldest = Math.min(...chain.bases.values());
    for (const c of chain.changes.filter((c) => c <= oldest)) this.drop(chain, `${CHANGES_PREFIX}${c}`);
    chain.changes = chain.changes.filter((c) => c > oldest);

    const index: ChainIndex = { version: CHAIN_VERSION, bases: Object.fromEntries(chain.bases), changes: chain.changes };
    return {
      metadata: { ...Object.fromEntries(chain.pending), [CHAIN]: Buffer.from(JSON.stringify(index)) },
      reusedMetadata: [...chain.stored.values()],
    };
  }

  /** The checkpoint completed: its new links are stored now, referenced from here on. */
  completed(manifest: Pick<CheckpointManifest, 'operators'>): void {
    for (const operator of manifest.operators) {
      for (const subtask of operator.subtasks) {
        const chain = this.parts.get(`${operator.operatorId}/${subtask.subtask}`);
        if (!chain) continue;
        const live = new Set([...[...chain.bases.keys()].map((kg) => `${FULL_PREFIX}${kg}`), ...chain.changes.map((c) => `${CHANGES_PREFIX}${c}`)]);
        chain.stored = new Map(subtask.metadata.filter((m) => live.has(m.name)).map((m) => [m.name, m]));
        chain.pending.clear();
      }
    }
  }

  /** Forgets every chain (the backends must then hand over full images: see requestFullCheckpoint). */
  reset(): void {
    this.parts.clear();
  }

  private drop(chain: PartChain, name: string): void {
    chain.stored.delete(name);
    chain.pending.delete(name);
  }
}
