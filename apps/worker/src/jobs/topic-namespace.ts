/**
 * Which Kafka topics a tenant's job may touch. A bundle is tenant code: it can hard-code any topic name in its
 * sources and sinks, so the job host checks the built job before it starts anything (no reader, writer or restore).
 * Allowed: the tenant's namespace `t.<tenantId>.` and the job's own internal topics `weir.<tenantId>.<jobId>.`
 * (dead letters, exchanges, sink commit markers). Another tenant's topics, another job's internal topics and
 * un-namespaced topics are refused with the topic and the prefixes it should have had.
 */
import { jobInternalTopicPrefix, tenantTopicPrefix, type JobDefinition } from '@weir/engine';

export class TopicNamespaceError extends Error {
  override readonly name = 'TopicNamespaceError';
}

interface TopicUse {
  readonly what: string;
  readonly topic: string;
}

/** Every Kafka topic the job would read or write: its Kafka sources and sinks, and its dead-letter topic. */
function topicUses(definition: JobDefinition, deadLetterTopic: string | undefined): TopicUse[] {
  const uses: TopicUse[] = [];
  for (const node of definition.nodes) {
    if (node.kind === 'source' && node.spec.kind === 'kafka') uses.push({ what: `source "${node.id}" reads`, topic: node.spec.topic });
    if (node.kind === 'sink' && node.spec.kind === 'kafka') uses.push({ what: `sink "${node.id}" writes`, topic: node.spec.topic });
  }
  if (deadLetterTopic) uses.push({ what: 'dead letters go to', topic: deadLetterTopic });
  return uses;
}

/** One sentence per topic outside what the job may use; empty when every topic is allowed. */
export function topicViolations(definition: JobDefinition, tenantId: string, jobId: string, deadLetterTopic?: string): string[] {
  const tenant = tenantTopicPrefix(tenantId);
  const internal = jobInternalTopicPrefix(tenantId, jobId);
  const inside = (topic: string, prefix: string) => topic.startsWith(prefix) && topic.length > prefix.length;
  return topicUses(definition, deadLetterTopic)
    .filter((use) => !inside(use.topic, tenant) && !inside(use.topic, internal))
    .map((use) => `${use.what} topic "${use.topic}", outside the tenant's namespace: tenant ${tenantId}'s jobs may use only topics starting with "${tenant}" (and job ${jobId}'s own internal topics "${internal}")`);
}

/** Throws a TopicNamespaceError naming every topic the job may not use. */
export function assertTopicsInNamespace(definition: JobDefinition, tenantId: string, jobId: string, deadLetterTopic?: string): void {
  const violations = topicViolations(definition, tenantId, jobId, deadLetterTopic);
  if (violations.length > 0) throw new TopicNamespaceError(`job ${jobId} refused: ${violations.join('; ')}`);
}
