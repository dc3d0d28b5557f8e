import { randomInt } from 'node:crypto';
import type { ICustomPartitioner, PartitionerArgs } from 'kafkajs';

const M = 0x5bd1e995;

/**
 * Kafka's murmur2 (org.apache.kafka.common.utils.Utils#murmur2) in 32-bit integer arithmetic. kafkajs computes the
 * same hash with its 64-bit Long emulation, a few objects per 4 bytes of key: that was ~2% of the engine's Kafka
 * pipeline. partitioner.spec.ts checks equality with kafkajs's own murmur2.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i << 2;
    let k = data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) | (data[i4 + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[tail + 2] << 16;
    if (rest >= 2) h ^= data[tail + 1] << 8;
    h ^= data[tail];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

/**
 * The partition list of the last javaCompatiblePartitioner call, in any producer. linear-grouping.ts reads it
 * synchronously right after kafkajs's reducer called the partitioner for a send's first message, so it can place
 * the send's other byte-keyed messages itself (same murmur2, same list) without kafkajs's per-message objects.
 * Null when the last call was not this partitioner's (the grouping then calls kafkajs's reducer for every message).
 */
const lastJavaPartitionerCall: { partitionMetadata: PartitionerArgs['partitionMetadata'] | null } = { partitionMetadata: null };

/** How many partitions the last javaCompatiblePartitioner call saw, or 0 (none since `forgetLastPartitionerCall`). */
export function lastPartitionCount(): number {
  return lastJavaPartitionerCall.partitionMetadata?.length ?? 0;
}

export function forgetLastPartitionerCall(): void {
  lastJavaPartitionerCall.partitionMetadata = null;
}

/** Kafka's partition of a byte key among `partitions` partitions, as javaCompatiblePartitioner computes it. */
export function partitionOfKey(key: Buffer, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/**
 * The Java client's default partitioning (as kafkajs's DefaultPartitioner): an explicit partition wins, a key picks
 * murmur2(key) mod partitions, keyless records go round-robin over partitions with a leader, from a random start.
 * Unlike kafkajs it does not filter the partition list per message: that is done once per metadata array.
 */
export const javaCompatiblePartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  let metadata: PartitionerArgs['partitionMetadata'] | null = null;
  let available: PartitionerArgs['partitionMetadata'] = [];
  return ({ topic, partitionMetadata, message }) => {
    lastJavaPartitionerCall.partitionMetadata = partitionMetadata;
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    const key = message.key;
    if (key !== null && key !== undefined) {
      return partitionOfKey(Buffer.isBuffer(key) ? key : Buffer.from(String(key)), partitionMetadata.length);
    }
    if (partitionMetadata !== metadata) {
      metadata = partitionMetadata;
      available = partitionMetadata.filter((p) => p.leader >= 0);
    }
    const counter = (counters.get(topic) ?? randomInt(0x7fffffff)) + 1;
    counters.set(topic, counter);
    if (available.length > 0) return available[(counter & 0x7fffffff) % available.length].partitionId;
    return (counter & 0x7fffffff) % partitionMetadata.length;
  };
};
