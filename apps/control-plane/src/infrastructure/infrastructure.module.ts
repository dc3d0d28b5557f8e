import {
  Global,
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createBlobStore, type BlobStore } from '@weir/blob';
import type { WeirConfig } from '@weir/config';
import { createPool, type Pool } from '@weir/db';
import { createKafkaConnector, type KafkaAdmin } from '@weir/kafka';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { BLOB_STORE, KAFKA_ADMIN, PG_POOL, REDIS } from './tokens';

/**
 * Connects what connects eagerly only once the app starts (so building it, as the OpenAPI generator does, opens
 * nothing), and closes the clients last, after every consumer and timer that uses them has stopped.
 */
@Injectable()
class InfrastructureLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(BLOB_STORE) private readonly blob: BlobStore,
    @Inject(KAFKA_ADMIN) private readonly kafka: KafkaAdmin,
  ) {}

  onApplicationBootstrap(): void {
    // ioredis reconnects by itself after a failure; the readiness check reports Redis down meanwhile.
    this.redis.connect().catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'Redis not reachable yet'));
  }

  beforeApplicationShutdown(signal?: string): void {
    this.logger.info({ signal }, 'control plane shutting down: consumers and timers stopped');
  }

  async onApplicationShutdown(signal?: string): Promise<void> {
    this.blob.close();
    await Promise.allSettled([this.pool.end(), this.redis.quit().catch(() => this.redis.disconnect()), this.kafka.close()]);
    this.logger.info({ signal }, 'control plane stopped: connections closed');
  }
}

/** The control plane's clients of Postgres, Redis, S3 and Kafka (admin only, for now), built once from the configuration. */
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
          lazyConnect: true,
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
      provide: KAFKA_ADMIN,
      inject: [WEIR_CONFIG, ROOT_LOGGER],
      useFactory: (config: WeirConfig, logger: Logger) => {
        const kafkaLog = logger.child({ component: 'kafka' });
        return createKafkaConnector({
          brokers: config.WEIR_KAFKA_BROKERS,
          clientId: `${config.WEIR_KAFKA_CLIENT_ID}-control-plane`,
          log: (level, message, fields) => kafkaLog[level]({ ...fields }, message),
        }).admin();
      },
    },
    InfrastructureLifecycle,
  ],
  exports: [PG_POOL, REDIS, BLOB_STORE, KAFKA_ADMIN],
})
export class InfrastructureModule {}
