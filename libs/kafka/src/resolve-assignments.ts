import type { PartitionAssignment } from './contract';
import { KafkaUsageError, TopicConfigError } from './errors';
import type { TopicPartitions } from './explicit-assigner';
import type { PartitionOffsets } from './kafkajs-admin';
import { partitionKey } from './record-buffer';

export interface ResolvedAssignments {
  /** Start offset per "topic:partition", 'earliest'/'latest' replaced by the broker's offsets. */
  readonly start: Map<string, string>;
  /** The log end per partition when resolved: the lag baseline until the first fetch. */
  readonly logEnd: Map<string, bigint>;
  /** The same partitions grouped by topic, as the assigner announces them. */
  readonly byTopic: TopicPartitions;
}

const OFFSET = /^\d+$/;

/** Checks the assignments against the broker's partitions and turns 'earliest'/'latest' into offsets. */
export async function resolveAssignments(
  assignments: readonly PartitionAssignment[],
  offsetsOf: (topic: string) => Promise<PartitionOffsets[]>,
): Promise<ResolvedAssignments> {
  const byTopic: TopicPartitions = {};
  for (const { topic, partition, offset } of assignments) {
    if (!Number.isInteger(partition) || partition < 0) {
      throw new KafkaUsageError(`Invalid partition ${partition} for topic "${topic}"`);
    }
    if (offset !== 'earliest' && offset !== 'latest' && !OFFSET.test(offset)) {
      throw new KafkaUsageError(`Invalid start offset "${offset}" for ${partitionKey(topic, partition)}`);
    }
    const partitions = (byTopic[topic] ??= []);
    if (partitions.includes(partition)) {
      throw new KafkaUsageError(`Partition ${partitionKey(topic, partition)} is assigned twice`);
    }
    partitions.push(partition);
  }

  const topics = Object.keys(byTopic);
  const offsets = new Map(await Promise.all(topics.map(async (t) => [t, await offsetsOf(t)] as const)));
  const start = new Map<string, string>();
  const logEnd = new Map<string, bigint>();
  for (const { topic, partition, offset } of assignments) {
    const known = offsets.get(topic) ?? [];
    const bounds = known.find((p) => p.partition === partition);
    if (!bounds) {
      throw new TopicConfigError(
        `Partition ${partition} of topic "${topic}" does not exist (the topic has ${known.length} partitions)`,
      );
    }
    const key = partitionKey(topic, partition);
    start.set(key, offset === 'earliest' ? bounds.earliest : offset === 'latest' ? bounds.latest : offset);
    logEnd.set(key, BigInt(bounds.latest));
  }
  return { start, logEnd, byTopic };
}
