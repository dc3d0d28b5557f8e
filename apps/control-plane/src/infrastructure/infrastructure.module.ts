import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createBlobStore, type BlobStore } from '@weir/blob';
import type { WeirConfig } from '@weir/config';
import { createPool, type Pool } from '@weir/db';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, WEIR_CONFIG, type ControlPlaneOptions } from '../control-plane-options';
import { KafkaProbe } from './kafka-probe';
import { BLOB_STORE, KAFKA_PROBE, PG_POOL, REDIS } from './tokens';

const DEFAULT_HEALTH_TIMEOUT_MS = 2_000;

/** Closes the clients last, after every consumer and timer that uses them has stopped. */
@Injectable()
class InfrastructureLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(BLOB_STORE) private readonly blob: BlobStore,
    @Inject(KAFKA_PROBE) private readonly kafka: KafkaProbe,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    this.blob.close();
    await Promise.allSettled([this.pool.end(), this.redis.quit().catch(() => this.redis.disconnect()), this.kafka.close()]);
  }
}

/** The control plane's clients of Postgres, Redis, S3 and Kafka, built once from the configuration. */
@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [WEIR_CONFIG, ROOT_LOGGER],
      useFactory: (config: WeirConfig, logger: Logger) =>
        createPool({
          connectionString: config.WEIR_PG_URL,
          applicationName: 'weir-control-plane',
          onIdleError: (err) => logger.warn({ err: { name: err.name, message: err.message } }, 'idle Postgres client failed'),
        }),
    },
    {
      provide: REDIS,
      inject: [WEIR_CONFIG, ROOT_LOGGER],
      useFactory: (config: WeirConfig, logger: Logger) => {
        // Fail fast while disconnected: this client only answers health checks.
        const redis = new Redis(config.WEIR_REDIS_URL, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: 2_000,
          connectionName: 'weir-control-plane',
        });
        redis.on('error', (err: Error) => logger.debug({ err: { name: err.name, message: err.message } }, 'Redis client error'));
        return redis;
      },
    },
    {
      provide: BLOB_STORE,
      inject: [WEIR_CONFIG],
      useFactory: (config: WeirConfig) => createBlobStore(config),
    },
    {
      provide: KAFKA_PROBE,
      inject: [WEIR_CONFIG, CONTROL_PLANE_OPTIONS],
      useFactory: (config: WeirConfig, options: ControlPlaneOptions) =>
        new KafkaProbe(config.WEIR_KAFKA_BROKERS, config.WEIR_KAFKA_CLIENT_ID, options.healthCheckTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS),
    },
    InfrastructureLifecycle,
  ],
  exports: [PG_POOL, REDIS, BLOB_STORE, KAFKA_PROBE],
})
export class InfrastructureModule {}
