/**
 * Pure key-group arithmetic, in the spirit of Flink's KeyGroupRangeAssignment. Everything that routes, stores or
 * moves keyed data relies on these functions, so they never change behaviour between versions.
 */
import { murmur3 } from './murmur3';

export const MAX_MAX_PARALLELISM = 32768;

export class InvalidParallelismError extends Error {
  override readonly name = 'InvalidParallelismError';
}

export function assertParallelism(parallelism: number, maxParallelism: number): void {
  if (!Number.isInteger(maxParallelism) || maxParallelism < 1 || maxParallelism > MAX_MAX_PARALLELISM) {
    throw new InvalidParallelismError(`maxParallelism must be an integer in [1, ${MAX_MAX_PARALLELISM}], got ${maxParallelism}`);
  }
  if (!Number.isInteger(parallelism) || parallelism < 1 || parallelism > maxParallelism) {
    throw new InvalidParallelismError(`parallelism must be an integer in [1, maxParallelism=${maxParallelism}], got ${parallelism}`);
  }
}

/** key bytes → key group: murmur3 of the serialised key, modulo the max parallelism. */
export function keyGroupFor(keyBytes: Uint8Array, maxParallelism: number): number {
  return murmur3(keyBytes) % maxParallelism;
}

/** An inclusive range of key groups [start, end]; empty when end < start. */
export interface KeyGroupRange {
  readonly start: number;
  readonly end: number;
}

/** The default contiguous range owned by one subtask (Flink's formula, so ranges split evenly on rescale). */
export function keyGroupRangeFor(subtask: number, parallelism: number, maxParallelism: number): KeyGroupRange {
  assertParallelism(parallelism, maxParallelism);
  const start = Math.floor((subtask * maxParallelism + parallelism - 1) / parallelism);
  const end = Math.floor(((subtask + 1) * maxParallelism - 1) / parallelism);
  return { start, end };
}

/** The subtask that owns a key group under the default contiguous assignment. */
export function defaultOwnerOf(keyGroup: number, parallelism: number, maxParallelism: number): number {
  return Math.floor((keyGroup * parallelism) / maxParallelism);
}
