import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { ControlPlaneMetrics } from '../metrics/control-plane-metrics';
import { rateLimitSettingsOf, RateLimits, type LimiterFactory } from './rate-limits';

/** Longest a rate-limit check may wait for Redis before the request is let through unchecked. */
export const RATE_LIMIT_REDIS_TIMEOUT_MS = 500;
/** How often, at most, a Redis outage of the limiter is logged again while it lasts. */
const UNCHECKED_LOG_EVERY_MS = 30_000;

/**
 * The API's rate limits (rate-limits.ts), counted in Redis with rate-limiter-flexible's RateLimiterRedis (one atomic
 * Lua script per counter), so every control-plane instance on the same Redis and WEIR_QUEUE_PREFIX shares them.
 * Keys: `<prefix>:rate-limit:<key|tenant>[-burst]:<id>`, expiring with their window.
 *
 * Its own Redis connection, built from WEIR_REDIS_URL like the shared one (infrastructure.module.ts) but with
 * auto-pipelining (the key's and the tenant's counters, and every request's of one event-loop turn, go out in one
 * write) and a command timeout, neither of which the shared client's other users want. No offline queue: while
 * Redis is down a check fails at once, and the request is let through with a warning (fail open).
 */
@Injectable()
export class ApiRateLimiter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly redis: Redis | null;
  private readonly limits: RateLimits;
  private uncheckedSinceLog = 0;
  private lastUncheckedLog = 0;

  constructor(
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
    metrics: ControlPlaneMetrics,
  ) {
    const log = logger.child({ component: 'rate-limits' });
    const settings = rateLimitSettingsOf(config);
    const on = settings.key !== null || settings.tenant !== null;
    this.redis = on
      ? new Redis(config.WEIR_REDIS_URL, {
          lazyConnect: true,
          enableOfflineQueue: false,
          enableAutoPipelining: true,
          maxRetriesPerRequest: 0,
          commandTimeout: RATE_LIMIT_REDIS_TIMEOUT_MS,
          connectTimeout: 2_000,
          connectionName: 'weir-control-plane-rate-limits',
        })
      : null;
    this.redis?.on('error', (err: Error) => log.debug({ err: { name: err.name, message: err.message } }, 'rate-limit Redis client error'));
    const redis = this.redis;
    const factory: LimiterFactory = (scope, window, points, duration) =>
      new RateLimiterRedis({
        storeClient: redis,
        rejectIfRedisNotReady: true,
        keyPrefix: `${config.WEIR_QUEUE_PREFIX}:rate-limit:${scope}${window === 'burst' ? '-burst' : ''}`,
        points,
        duration,
      });
    this.limits = new RateLimits(settings, factory, {
      limited: (scope) => metrics.rateLimited.inc({ limit: scope }),
      unchecked: (err) => {
        metrics.rateLimitUnchecked.inc();
        this.uncheckedSinceLog++;
        const now = Date.now();
        if (now - this.lastUncheckedLog < UNCHECKED_LOG_EVERY_MS) return;
        log.warn(
          { err: { name: err.name, message: err.message }, requestsUnchecked: this.uncheckedSinceLog },
          'rate limits not checked: Redis did not answer; requests are let through until it does',
        );
        this.lastUncheckedLog = now;
        this.uncheckedSinceLog = 0;
      },
      recovered: () => {
        log.info({ requestsUnchecked: this.uncheckedSinceLog }, 'rate limits checked again: Redis answers');
        this.lastUncheckedLog = 0;
        this.uncheckedSinceLog = 0;
      },
    });
    if (settings.key || settings.tenant) log.debug({ settings }, 'API rate limits');
  }

  get enabled(): boolean {
    return this.limits.enabled;
  }

  /** Counts one request of `principal`; throws RateLimitedProblem (429) when its key or tenant is over its limit. */
  admit(principal: { readonly keyId: string; readonly tenantId: string }): Promise<void> {
    return this.limits.admit(principal);
  }

  onApplicationBootstrap(): void {
    // ioredis reconnects by itself; until it does, requests pass unchecked (and are counted as such).
    this.redis?.connect().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
