/**
 * Each tenant's own Kafka identity. A job host authenticates as its tenant (SASL/SCRAM-SHA-256) on the listener for
 * job hosts, whose ACLs reach only that tenant's topics (`t.<tenant>.`), its jobs' internal topics
 * (`weir.<tenant>.`), and its jobs' consumer groups and transactional ids. So tenant code that gets hold of a Kafka
 * client (it may load kafkajs) still reaches only its own tenant's data. The platform (control plane, workers)
 * keeps its own listener, which job hosts cannot connect to (outbound-guard.ts).
 *
 * A tenant's password is derived from the platform's secret (HMAC), so every worker computes the same one without
 * storing or sending it; the worker creates the user and its ACLs the first time it starts one of the
 * tenant's job hosts (both are idempotent on the broker).
 */
import { createHmac } from 'node:crypto';
import { tenantClientIdPrefix, tenantInternalTopicPrefix, tenantTopicPrefix } from '@weir/engine';
import { readerGroupIdPrefix, type KafkaAdmin, type KafkaCredentials, type KafkaGrant } from '@weir/kafka';

/** What a job host of one tenant connects to Kafka with. */
export interface TenantKafkaIdentity {
  readonly brokers: readonly string[];
  readonly credentials: KafkaCredentials;
}

export function tenantKafkaUser(tenantId: string): string {
  return `tenant.${tenantId}`;
}

export function tenantKafkaPassword(secret: string, tenantId: string): string {
  return createHmac('sha256', secret).update(`kafka-tenant:${tenantId}`).digest('base64url');
}

/** Everything a tenant's job hosts use: their own topics, their jobs' internal topics, groups and transactions. */
export function tenantKafkaGrants(tenantId: string): KafkaGrant[] {
  const username = tenantKafkaUser(tenantId);
  return [
    { username, resource: 'topic', prefix: tenantTopicPrefix(tenantId), operations: ['read', 'write', 'describe'] },
    // Exchanges, run control, sink commit markers and dead letters: created by the job's own processes.
    { username, resource: 'topic', prefix: tenantInternalTopicPrefix(tenantId), operations: ['read', 'write', 'create', 'describe', 'describe-configs'] },
    { username, resource: 'group', prefix: readerGroupIdPrefix(tenantClientIdPrefix(tenantId)), operations: ['read', 'describe'] },
    { username, resource: 'transactional-id', prefix: tenantClientIdPrefix(tenantId), operations: ['write', 'describe'] },
  ];
}

/** Hands out tenants' Kafka identities, creating each tenant's user and ACLs once per worker process. */
export class TenantKafkaAccess {
  private readonly provisioned = new Map<string, Promise<void>>();
  private secret: Promise<string> | undefined;

  /** `secret`: read once, when the first job host needs it (tenant-kafka-secret.ts). */
  constructor(
    private readonly admin: KafkaAdmin,
    private readonly brokers: readonly string[],
    private readonly readSecret: () => Promise<string>,
  ) {}

  async forTenant(tenantId: string): Promise<TenantKafkaIdentity> {
    this.secret ??= this.readSecret().catch((err: unknown) => {
      this.secret = undefined;
      throw err;
    });
    const credentials = { username: tenantKafkaUser(tenantId), password: tenantKafkaPassword(await this.secret, tenantId) };
    let done = this.provisioned.get(tenantId);
    if (!done) {
      done = this.provision(tenantId, credentials);
      this.provisioned.set(tenantId, done);
      // A failure (the broker unreachable) is tried again by the next job host of the tenant.
      done.catch(() => this.provisioned.delete(tenantId));
    }
    await done;
    return { brokers: this.brokers, credentials };
  }

  private async provision(tenantId: string, credentials: KafkaCredentials): Promise<void> {
    await this.admin.upsertScramUser(credentials.username, credentials.password);
    await this.admin.grant(tenantKafkaGrants(tenantId));
  }

  async close(): Promise<void> {
    await this.admin.close();
  }
}
