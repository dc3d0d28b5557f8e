import type { InvalidParameter } from '../problems/problem-details';

/** Every Kafka topic a tenant's job touches lives under this prefix. */
export function tenantTopicPrefix(tenantId: string): string {
  return `t.${tenantId}.`;
}

/** Topics named in a deployment's config that fall outside the tenant's namespace, as 400 entries. */
export function configTopicViolations(tenantId: string, topics: Readonly<Record<string, string>> | undefined): InvalidParameter[] {
  const prefix = tenantTopicPrefix(tenantId);
  return Object.entries(topics ?? {})
    .filter(([, topic]) => !topic.startsWith(prefix) || topic.length === prefix.length)
    .map(([name, topic]) => ({ in: 'body', name: `config.topics.${name}`, reason: `topic ${JSON.stringify(topic)} must start with "${prefix}"` }));
}

/**
 * The hook for topics a bundle itself uses. Today's bundles hard-code their topics in the job source and the
 * manifest does not list them, so they cannot be checked here (`topics` null): a bundle can still read or write a
 * topic outside its tenant's namespace. Closing that gap needs the manifest to declare topics (checked here and on
 * upload) and the worker to enforce them (Kafka ACLs per tenant, or the job host refusing undeclared topics).
 */
export function bundleTopicViolations(tenantId: string, topics: readonly string[] | null, field: string): InvalidParameter[] {
  if (!topics) return [];
  const prefix = tenantTopicPrefix(tenantId);
  return topics
    .filter((topic) => !topic.startsWith(prefix))
    .map((topic) => ({ in: 'body', name: field, reason: `the bundle uses topic ${JSON.stringify(topic)}, outside "${prefix}"` }));
}
