import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { WeirConfig } from '@weir/config';

/** Where the platform's generated secret lives, beside its queues (job hosts cannot reach Redis). */
export function tenantKafkaSecretKey(queuePrefix: string): string {
  return `${queuePrefix}:kafka-tenant-secret`;
}

/**
 * The secret tenants' Kafka passwords are derived from: WEIR_KAFKA_TENANT_SECRET, or else a random one that the
 * first worker makes and every worker of the platform reads from Redis (SET NX: of two workers starting together,
 * both end with the same one). Every worker must derive the same passwords: a worker with another secret would reset
 * a tenant's password under the job hosts of the others.
 */
export async function tenantKafkaSecret(config: Pick<WeirConfig, 'WEIR_KAFKA_TENANT_SECRET' | 'WEIR_REDIS_URL' | 'WEIR_QUEUE_PREFIX'>): Promise<string> {
  if (config.WEIR_KAFKA_TENANT_SECRET) return config.WEIR_KAFKA_TENANT_SECRET;
  const redis = new Redis(config.WEIR_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 2, connectionName: 'weir-worker-kafka-secret' });
  try {
    await redis.connect();
    const key = tenantKafkaSecretKey(config.WEIR_QUEUE_PREFIX);
    await redis.set(key, randomBytes(32).toString('base64url'), 'NX');
    const secret = await redis.get(key);
    if (!secret) throw new Error(`Redis holds no ${key} right after it was set`);
    return secret;
  } finally {
    redis.disconnect();
  }
}
