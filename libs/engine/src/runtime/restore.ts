/**
 * Starting from a checkpoint: which state and positions each new subtask takes. Key-group images go to whichever
 * subtask owns the key group now, so a checkpoint restores at any parallelism.
 */
import type { KeyedStateBackend } from '@weir/state';
import type { KeyedStreamOperator } from './operators/operator-contract';
import { type CheckpointSnapshot, JobRunError } from './running-job';
import type { SubtaskSnapshot } from './subtask';

export function restoredParts(restore: CheckpointSnapshot | undefined, stageId: string): SubtaskSnapshot[] {
  return (restore?.subtasks ?? []).filter((part) => part.stageId === stageId);
}

/** Kafka source offsets by partition, from every part of the source (positions are keyed `topic:partition`). */
export function restoredOffsets(parts: readonly SubtaskSnapshot[], topic: string): Map<number, string> | undefined {
  if (parts.length === 0) return undefined;
  const offsets = new Map<number, string>();
  for (const part of parts) {
    for (const [key, offset] of Object.entries(part.sourcePositions ?? {})) {
      const at = key.lastIndexOf(':');
      if (key.slice(0, at) === topic) offsets.set(Number(key.slice(at + 1)), offset);
    }
  }
  return offsets;
}

/** A generator's next index; its positions are per subtask, so it restores only at the same parallelism. */
export function restoredGeneratorIndex(parts: readonly SubtaskSnapshot[], sourceId: string, subtask: number, parallelism: number): number | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length !== parallelism) {
    throw new JobRunError(`generator "${sourceId}" was checkpointed at parallelism ${parts.length}; restore it at the same parallelism`);
  }
  const index = parts.find((part) => part.subtask === subtask)?.sourcePositions?.index;
  return index === undefined ? undefined : Number(index);
}

/** Puts the restored state of the key groups a subtask owns into its backend before it starts. */
export async function restoreKeyed(
  parts: readonly SubtaskSnapshot[],
  operator: KeyedStreamOperator,
  backend: KeyedStateBackend,
  owned: Iterable<number>,
  subtask: number,
): Promise<void> {
  if (parts.length === 0) return;
  const images = new Map<number, Uint8Array>();
  for (const part of parts) for (const [kg, image] of part.keyGroups ?? []) images.set(kg, image);
  for (const kg of owned) {
    const image = images.get(kg);
    if (image) await backend.restoreKeyGroup(kg, image);
  }
  const own = parts.find((part) => part.subtask === subtask) ?? parts[0];
  if (own.operatorState !== undefined && own.operatorState !== null) operator.restoreOperatorState(own.operatorState);
}

/**
 * Kafka exchange: per key group, where the restored job starts reading its partition (the offset the checkpointed
 * subtask had reached; without one, the partition's start). Records of the checkpointed run are skipped either way.
 */
export function restoredExchangePositions(parts: readonly SubtaskSnapshot[]): Map<number, string> {
  const positions = new Map<number, string>();
  for (const part of parts) {
    for (const [kg, offset] of Object.entries(part.exchangePositions ?? {})) positions.set(Number(kg), offset);
  }
  return positions;
}
