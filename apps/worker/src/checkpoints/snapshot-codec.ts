/**
 * The engine's checkpoint cut ↔ libs/checkpoint parts. Each key group's image is its own metadata blob: blobs are
 * content-addressed on S3, so a key group that did not change since the base checkpoint is not uploaded again.
 * Exactly-once sink epochs are parts of the sink operator (one per sink subtask), so a restore can commit them.
 */
import type { CheckpointPartInput, DownloadedCheckpoint } from '@weir/checkpoint';
import type { CheckpointSnapshot, SinkEpoch, SubtaskSnapshot } from '@weir/engine';
import type { KeyGroupRange } from '@weir/state';
import { pack, unpack } from 'msgpackr';

const KEY_GROUP_PREFIX = 'kg-';
const OPERATOR_STATE = 'operator-state';
const SOURCE_POSITIONS = 'source-positions';
const SINK_EPOCH = 'sink-epoch';

/** Key groups each keyed subtask owns (its routing table), to record in the manifest. */
export type OwnedKeyGroups = (stageId: string, subtask: number) => readonly number[] | null;

export function toCheckpointParts(snapshot: CheckpointSnapshot, owned: OwnedKeyGroups): CheckpointPartInput[] {
  const parts: CheckpointPartInput[] = snapshot.subtasks.map((s) => {
    const metadata: Record<string, Uint8Array> = {};
    for (const [kg, image] of s.keyGroups ?? []) metadata[`${KEY_GROUP_PREFIX}${kg}`] = image;
    if (s.operatorState !== undefined && s.operatorState !== null) metadata[OPERATOR_STATE] = pack(s.operatorState);
    if (s.sourcePositions) metadata[SOURCE_POSITIONS] = Buffer.from(JSON.stringify(s.sourcePositions));
    const groups = s.keyGroups ? owned(s.stageId, s.subtask) : null;
    return { operatorId: s.stageId, subtask: s.subtask, metadata, ...(groups ? { keyGroups: rangesOf(groups) } : {}) };
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
    const images = new Map<number, Uint8Array>();
    for (const [name, bytes] of Object.entries(part.metadata)) {
      if (name.startsWith(KEY_GROUP_PREFIX)) images.set(Number(name.slice(KEY_GROUP_PREFIX.length)), bytes);
    }
    const positions = part.metadata[SOURCE_POSITIONS];
    const operatorState = part.metadata[OPERATOR_STATE];
    subtasks.push({
      stageId: part.operatorId,
      subtask: part.subtask,
      ...(positions ? { sourcePositions: JSON.parse(positions.toString('utf8')) as Record<string, string> } : {}),
      ...(part.keyGroups ? { keyGroups: images } : {}),
      ...(operatorState ? { operatorState: unpack(operatorState) as unknown } : {}),
    });
  }
  return { snapshot: { checkpointId: downloaded.manifest.checkpointId, subtasks }, sinkEpochs };
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
