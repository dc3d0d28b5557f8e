import { Inject, Injectable } from '@nestjs/common';
import { BlobStoreError, type BlobStore } from '@weir/blob';
import { jobInternalTopicPrefix, tenantTopicPrefix } from '@weir/engine';
import { KafkaError, type KafkaAdmin } from '@weir/kafka';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { BLOB_STORE, KAFKA_ADMIN } from '../infrastructure/tokens';
import { TenantDeletionUnavailableProblem } from './tenant-deletion.problems';

/** Object deletions in flight at once: s3rver and S3 both take that many without throttling. */
const DELETE_CONCURRENCY = 16;

/**
 * Every object a tenant owns lives under this prefix: bundles and their upload staging keys
 * (`tenants/<id>/bundles/…`, bundles/bundle.ts), checkpoints and savepoints (`tenants/<id>/jobs/<jobId>/…`,
 * @weir/checkpoint's layout). Tenant ids have no `/`, so the trailing slash keeps `tenants/t1/` from matching t12's.
 */
export function tenantObjectPrefix(tenantId: string): string {
  return `tenants/${tenantId}/`;
}

/**
 * The tenant's topics: its own (`t.<id>.`) and its jobs' internal ones (exchanges, commit markers, dead letters:
 * `weir.<id>.<jobId>.`), matched with the engine's own prefixes and nothing looser. Prefixes end in a dot and ids
 * have none, so another tenant's or another job's topics never match.
 */
export function tenantTopics(all: readonly string[], tenantId: string, deploymentIds: readonly string[]): string[] {
  const prefixes = [tenantTopicPrefix(tenantId), ...deploymentIds.map((id) => jobInternalTopicPrefix(tenantId, id))];
  return all.filter((topic) => prefixes.some((p) => topic.startsWith(p)));
}

/**
 * Removes what a tenant has outside Postgres: its S3 objects and its Kafka topics. Idempotent (an absent object or
 * topic is simply done), so a deletion that stopped part-way runs it again from the top. A store or broker that
 * fails becomes a 503 that says the deletion can be resumed.
 */
@Injectable()
export class TenantDataSweeper {
  constructor(
    @Inject(BLOB_STORE) private readonly blob: BlobStore,
    @Inject(KAFKA_ADMIN) private readonly kafka: KafkaAdmin,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  async sweep(tenantId: string, deploymentIds: readonly string[]): Promise<void> {
    await this.sweepObjects(tenantId);
    await this.sweepTopics(tenantId, deploymentIds);
  }

  /** Every object under the tenant's prefix. */
  async sweepObjects(tenantId: string): Promise<void> {
    try {
      // Keys, not promises, wait for the batch: a listing that fails must leave no deletion unawaited.
      let keys: string[] = [];
      for await (const object of this.blob.list(tenantObjectPrefix(tenantId))) {
        keys.push(object.key);
        if (keys.length >= DELETE_CONCURRENCY) {
          await Promise.all(keys.map((key) => this.blob.delete(key)));
          keys = [];
        }
      }
      await Promise.all(keys.map((key) => this.blob.delete(key)));
    } catch (err) {
      if (!(err instanceof BlobStoreError)) throw err;
      this.logger.warn({ tenantId, err: { name: err.name, message: err.message } }, 'tenant deletion: object storage failed; a DELETE resumes');
      throw new TenantDeletionUnavailableProblem(tenantId, 'Object storage');
    }
  }

  /** Every topic of the tenant and of its jobs. */
  async sweepTopics(tenantId: string, deploymentIds: readonly string[]): Promise<void> {
    try {
      await this.kafka.deleteTopics(tenantTopics(await this.kafka.listTopics(), tenantId, deploymentIds));
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      this.logger.warn({ tenantId, err: { name: err.name, message: err.message } }, 'tenant deletion: Kafka failed; a DELETE resumes');
      throw new TenantDeletionUnavailableProblem(tenantId, 'Kafka');
    }
  }
}
