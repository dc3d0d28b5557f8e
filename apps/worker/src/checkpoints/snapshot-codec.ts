/**
 * The engine's checkpoint cut ↔ libs/checkpoint parts. Keyed state is stored as per-key-group chains (a full image
 * plus the changes since, key-group-chains.ts); without chains (a part written before them, or no `chain` blob)
 * every `kg-<n>` blob is a full image. Blobs are content-addressed on S3, so an unchanged one is never uploaded
 * twice. Exactly-once sink epochs are parts of the sink operator (one per sink subtask), so a restore can commit them.
 */
import type { CheckpointPartInput, DownloadedCheckpoint } from '@weir/checkpoint';
import type { CheckpointSnapshot, SinkEpoch, SubtaskSnapshot } from '@weir/engine';
import { composeKeyGroupImage, type KeyGroupRange } from '@weir/state';
import { pack, unpack } from 'msgpackr';
import { CHAIN, CHAIN_VERSION, CHANGES_PREFIX, type ChainIndex, type KeyGroupChains } from './key-group-chains';

const KEY_GROUP_PREFIX = 'kg-';
const OPERATOR_STATE = 'operator-state';
const SOURCE_POSITIONS = 'source-positions';
const SINK_EPOCH = 'sink-epoch';
const EXCHANGE_POSITIONS = 'exchange-positions';

/** Key groups each keyed subtask owns (its routing table), to record in the manifest. */
export type OwnedKeyGroups = (stageId: string, subtask: number) => readonly number[] | null;

/**
 * The parts of a cut. With `chains`, keyed parts hold chains (changes images allowed); without, every key-group
 * image must be a full one and is stored as it is.
 */
export function toCheckpointParts(snapshot: CheckpointSnapshot, owned: OwnedKeyGroups, chains?: KeyGroupChains): CheckpointPartInput[] {
  const parts: CheckpointPartInput[] = snapshot.subtasks.map((s) => {
    let metadata: Record<string, Uint8Array> = {};
    let reusedMetadata: CheckpointPartInput['reusedMetadata'];
    const groups = s.keyGroups ? owned(s.stageId, s.subtask) : null;
    if (s.keyGroups && chains) {
      ({ metadata, reusedMetadata } = chains.partOf(snapshot.checkpointId, s.stageId, s.subtask, s.keyGroups, groups ?? [...s.keyGroups.keys()]));
    } else {
      for (const [kg, image] of s.keyGroups ?? []) metadata[`${KEY_GROUP_PREFIX}${kg}`] = image;
    }
    if (s.operatorState !== undefined && s.operatorState !== null) metadata[OPERATOR_STATE] = pack(s.operatorState);
    if (s.sourcePositions) metadata[SOURCE_POSITIONS] = Buffer.from(JSON.stringify(s.sourcePositions));
    if (s.exchangePositions) metadata[EXCHANGE_POSITIONS] = Buffer.from(JSON.stringify(s.exchangePositions));
    return {
      operatorId: s.stageId,
      subtask: s.subtask,
      metadata,
      ...(reusedMetadata && reusedMetadata.length > 0 ? { reusedMetadata } : {}),
      ...(groups ? { keyGroups: rangesOf(groups) } : {}),
    };
  });
  for (const epoch of snapshot.sinkEpochs ?? []) {
    parts.push({ operatorId: epoch.sinkId, subtask: epoch.subtask, metadata: { [SINK_EPOCH]: pack(epoch) } });
  }
  return parts;
}

export interface DecodedCheckpoint {
  readonly snapshot: CheckpointSnapshot;
  readonly sinkEpochs: readonly SinkEpoch[];
}

export function fromDownloaded(downloaded: DownloadedCheckpoint): DecodedCheckpoint {
  const subtasks: SubtaskSnapshot[] = [];
  const sinkEpochs: SinkEpoch[] = [];
  for (const part of downloaded.parts) {
    const epoch = part.metadata[SINK_EPOCH];
    if (epoch) {
      sinkEpochs.push(unpack(epoch) as SinkEpoch);
      continue;
    }
    const images = part.metadata[CHAIN] ? composeChains(part.operatorId, part.subtask, part.metadata) : fullImages(part.metadata);
    const positions = part.metadata[SOURCE_POSITIONS];
    const exchange = part.metadata[EXCHANGE_POSITIONS];
    const operatorState = part.metadata[OPERATOR_STATE];
    subtasks.push({
      stageId: part.operatorId,
      subtask: part.subtask,
      ...(positions ? { sourcePositions: JSON.parse(positions.toString('utf8')) as Record<string, string> } : {}),
      ...(part.keyGroups ? { keyGroups: images } : {}),
      ...(operatorState ? { operatorState: unpack(operatorState) as unknown } : {}),
      ...(exchange ? { exchangePositions: JSON.parse(exchange.toString('utf8')) as Record<string, string> } : {}),
    });
  }
  return { snapshot: { checkpointId: downloaded.manifest.checkpointId, subtasks }, sinkEpochs };
}

function fullImages(metadata: Readonly<Record<string, Buffer>>): Map<number, Uint8Array> {
  const images = new Map<number, Uint8Array>();
  for (const [name, bytes] of Object.entries(metadata)) {
    if (name.startsWith(KEY_GROUP_PREFIX)) images.set(Number(name.slice(KEY_GROUP_PREFIX.length)), bytes);
  }
  return images;
}

/** Each key group's full image, rebuilt from its chain: the full image, then every later changes blob's part. */
function composeChains(operatorId: string, subtask: number, metadata: Readonly<Record<string, Buffer>>): Map<number, Uint8Array> {
  const index = JSON.parse(metadata[CHAIN].toString('utf8')) as ChainIndex;
  if (index.version !== CHAIN_VERSION) {
    throw new Error(`${operatorId}/${subtask}: key-group chain version ${index.version} is not supported (this version reads ${CHAIN_VERSION})`);
  }
  const changes = index.changes.map((c) => {
    const blob = metadata[`${CHANGES_PREFIX}${c}`];
    if (!blob) throw new Error(`${operatorId}/${subtask}: the chain names ${CHANGES_PREFIX}${c}, which the checkpoint lacks`);
    return { checkpointId: c, byKeyGroup: new Map(unpack(blob) as [number, Uint8Array][]) };
  });
  const images = new Map<number, Uint8Array>();
  for (const [kgText, base] of Object.entries(index.bases)) {
    const kg = Number(kgText);
    const full = metadata[`${KEY_GROUP_PREFIX}${kg}`];
    if (!full) throw new Error(`${operatorId}/${subtask}: the chain names ${KEY_GROUP_PREFIX}${kg}, which the checkpoint lacks`);
    const later: Uint8Array[] = [];
    for (const c of changes) {
      const image = c.checkpointId > base ? c.byKeyGroup.get(kg) : undefined;
      if (image) later.push(image);
    }
    images.set(kg, later.length === 0 ? full : composeKeyGroupImage(kg, full, later));
  }
  return images;
}

/** Sorted key groups as inclusive ranges. */
export function rangesOf(keyGroups: readonly number[]): KeyGroupRange[] {
  const sorted = [...keyGroups].sort((a, b) => a - b);
  const out: KeyGroupRange[] = [];
  for (const kg of sorted) {
    const last = out[out.length - 1];
    if (last && last.end === kg - 1) out[out.length - 1] = { start: last.start, end: kg };
    else out.push({ start: kg, end: kg });
  }
  return out;
}
