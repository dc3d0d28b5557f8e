import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { BlobStore } from '@weir/blob';
import type { Pool } from '@weir/db';
import type { KafkaAdmin } from '@weir/kafka';
import type { Redis } from 'ioredis';
import { CONTROL_PLANE_OPTIONS, type ControlPlaneOptions } from '../control-plane-options';
import { BLOB_STORE, KAFKA_ADMIN, PG_POOL, REDIS } from '../infrastructure/tokens';

const DEFAULT_TIMEOUT_MS = 2_000;

/**
 * One readiness check per dependency. Each is bounded by a timeout (terminus's withTimeout aborts the signal
 * and reports "timeout of N ms exceeded"), so a hung dependency turns into a 503 instead of a hung endpoint.
 */
@Injectable()
export class DependencyChecks {
  private readonly timeoutMs: number;

  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(PG_POOL) private readonly pg: Pool,
    @Inject(REDIS) private readonly redisClient: Redis,
    @Inject(KAFKA_ADMIN) private readonly kafka: KafkaAdmin,
    @Inject(BLOB_STORE) private readonly blob: BlobStore,
  ) {
    this.timeoutMs = options.healthCheckTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** SELECT 1 as the application role: the role the API runs queries with. */
  postgres(): PromiseLike<HealthIndicatorResult<'postgres'>> {
    return this.health
      .check('postgres')
      .attempt(async () => {
        await this.pg.query('SELECT 1');
      })
      .withTimeout(this.timeoutMs);
  }

  redis(): PromiseLike<HealthIndicatorResult<'redis'>> {
    return this.health
      .check('redis')
      .attempt(async () => {
        const reply = await this.redisClient.ping();
        if (reply !== 'PONG') throw new Error(`unexpected PING reply ${JSON.stringify(reply)}`);
      })
      .withTimeout(this.timeoutMs);
  }

  /** A metadata request answered by a broker. */
  kafkaBroker(): PromiseLike<HealthIndicatorResult<'kafka'>> {
    return this.health
      .check('kafka')
      .attempt(async () => {
        await this.kafka.ping(this.timeoutMs);
      })
      .withTimeout(this.timeoutMs);
  }

  /** HeadBucket on the configured bucket. */
  s3(): PromiseLike<HealthIndicatorResult<'s3'>> {
    return this.health
      .check('s3')
      .attempt(async ({ signal }) => {
        await this.blob.probe({ signal });
        return { bucket: this.blob.bucket };
      })
      .withTimeout(this.timeoutMs);
  }
}
