import { tenantTopicPrefix } from '@weir/engine';
import type { InvalidParameter } from '../problems/problem-details';

/** Topics named in a deployment's config that fall outside the tenant's namespace, as 400 entries. */
export function configTopicViolations(tenantId: string, topics: Readonly<Record<string, string>> | undefined): InvalidParameter[] {
  const prefix = tenantTopicPrefix(tenantId);
  return Object.entries(topics ?? {})
    .filter(([, topic]) => !topic.startsWith(prefix) || topic.length === prefix.length)
    .map(([name, topic]) => ({ in: 'body', name: `config.topics.${name}`, reason: `topic ${JSON.stringify(topic)} must start with "${prefix}"` }));
}

/**
 * Topics a bundle's manifest declares (optional: `topics` null when it lists none) that fall outside the tenant's
 * namespace, refused at deploy and upgrade time. What the bundle's code actually uses is enforced where the code
 * runs: the job host refuses a job whose Kafka sources, sinks or dead letters lie outside `t.<tenantId>.` and its
 * own `weir.<tenantId>.<jobId>.` (apps/worker/src/jobs/topic-namespace.ts), failing the run with that reason.
 */
export function bundleTopicViolations(tenantId: string, topics: readonly string[] | null, field: string): InvalidParameter[] {
  if (!topics) return [];
  const prefix = tenantTopicPrefix(tenantId);
  return topics
    .filter((topic) => !topic.startsWith(prefix))
    .map((topic) => ({ in: 'body', name: field, reason: `the bundle uses topic ${JSON.stringify(topic)}, outside "${prefix}"` }));
}
