import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { REDIS } from '../infrastructure/tokens';
import { ApiKeyAuthenticator } from './api-key.authenticator';

const KEY_ID = /^[a-f0-9]{24}$/;

/**
 * Tells every control-plane instance that a key was revoked, so each drops it from its authentication cache at
 * once rather than when the entry expires. Best effort: while Redis is unreachable, the cache TTL
 * (AUTH_CACHE_TTL_MS) still bounds how long another instance accepts a revoked key. Messages carry key ids only.
 */
@Injectable()
export class ApiKeyRevocations implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly channel: string;
  private readonly subscriber: Redis;

  constructor(
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {
    this.channel = `${config.WEIR_QUEUE_PREFIX}:api-keys:revoked`;
    // Its own connection: a subscribed connection can do nothing else. ioredis resubscribes after a reconnect.
    this.subscriber = new Redis(config.WEIR_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: null, connectionName: 'weir-control-plane-revocations' });
    this.subscriber.on('error', (err: Error) => this.logger.debug({ err: { name: err.name, message: err.message } }, 'revocation subscriber error'));
    this.subscriber.on('message', (_channel: string, keyId: string) => {
      if (KEY_ID.test(keyId)) this.authenticator.invalidate(keyId);
    });
  }

  onApplicationBootstrap(): void {
    this.subscriber
      .connect()
      .then(() => this.subscriber.subscribe(this.channel))
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'revocation subscriber not connected yet; the auth cache TTL applies'));
  }

  async onApplicationShutdown(): Promise<void> {
    // Never connected (the OpenAPI generator builds the app without starting it): nothing to say goodbye to.
    if (this.subscriber.status === 'wait' || this.subscriber.status === 'end') {
      this.subscriber.disconnect();
      return;
    }
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  /** Publishes the revocation; a failure is logged, never thrown (the revocation itself is already committed). */
  async publish(keyId: string): Promise<void> {
    try {
      await this.redis.publish(this.channel, keyId);
    } catch (err) {
      this.logger.warn({ keyId, err: { name: (err as Error).name, message: (err as Error).message } }, 'could not broadcast a key revocation; other instances honour it within the auth cache TTL');
    }
  }
}
