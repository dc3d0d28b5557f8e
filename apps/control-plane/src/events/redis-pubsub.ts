import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { closeRedis } from './events';

/** Messages a slow subscriber may have queued before the oldest are dropped (metrics are superseded anyway). */
export const SUBSCRIBER_QUEUE_LIMIT = 256;
/** How long a new subscription waits for Redis to confirm SUBSCRIBE before it is refused as unavailable. */
export const SUBSCRIBE_TIMEOUT_MS = 5_000;

/** Redis could not confirm a subscription in time: the caller may retry (SERVICE_UNAVAILABLE). */
export class EventsUnavailableError extends Error {
  override readonly name = 'EventsUnavailableError';
}

type Listener = (message: unknown) => void;

/**
 * One Redis subscriber connection per control-plane instance, shared by every GraphQL subscription it serves: a
 * channel is SUBSCRIBEd when its first local subscriber arrives and UNSUBSCRIBEd when its last one leaves. Each
 * message is parsed once and handed to every local subscriber of its channel.
 */
@Injectable()
export class RedisPubSub implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(@Inject(WEIR_CONFIG) config: WeirConfig, @Inject(ROOT_LOGGER) private readonly logger: Logger) {
    this.redis = new Redis(config.WEIR_REDIS_URL, {
      lazyConnect: true,
      // Subscriptions are re-established by ioredis after a reconnect (autoResubscribe, on by default).
      maxRetriesPerRequest: null,
      connectionName: 'weir-control-plane-subscriber',
    });
    this.redis.on('error', (err: Error) => this.logger.debug({ err: { name: err.name, message: err.message } }, 'subscriber Redis error'));
    this.redis.on('message', (channel: string, raw: string) => this.dispatch(channel, raw));
  }

  onApplicationBootstrap(): void {
    this.redis.connect().catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'subscriber Redis not reachable yet'));
  }

  async onApplicationShutdown(): Promise<void> {
    this.listeners.clear();
    await closeRedis(this.redis);
  }

  /** Channels this instance is subscribed to (for tests and diagnostics). */
  get channelCount(): number {
    return this.listeners.size;
  }

  /**
   * An async iterator over the channel's messages, as graphql-js subscriptions consume it. The subscription to
   * Redis is confirmed before the iterator is returned, so nothing published afterwards is missed. Returning the
   * iterator (the client unsubscribes or disconnects) removes the listener.
   */
  async iterator<T>(channel: string): Promise<AsyncIterableIterator<T>> {
    const queue: T[] = [];
    let wake: ((result: IteratorResult<T>) => void) | undefined;
    let done = false;
    const listener: Listener = (message) => {
      if (done) return;
      if (wake) {
        const resolve = wake;
        wake = undefined;
        resolve({ value: message as T, done: false });
        return;
      }
      if (queue.length >= SUBSCRIBER_QUEUE_LIMIT) queue.shift();
      queue.push(message as T);
    };
    await this.add(channel, listener);
    const finish = async (): Promise<IteratorResult<T>> => {
      if (!done) {
        done = true;
        queue.length = 0;
        wake?.({ value: undefined, done: true });
        wake = undefined;
        await this.remove(channel, listener);
      }
      return { value: undefined, done: true };
    };
    const iterator: AsyncIterableIterator<T> = {
      next: () => {
        if (queue.length) return Promise.resolve({ value: queue.shift() as T, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (wake = resolve));
      },
      return: finish,
      throw: async (err: unknown) => {
        await finish();
        throw err;
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  private async add(channel: string, listener: Listener): Promise<void> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    // SUBSCRIBE is idempotent and cheap; awaiting it for every subscriber means each one starts confirmed.
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.redis.subscribe(channel),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new EventsUnavailableError('Redis did not confirm the subscription in time')), SUBSCRIBE_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      await this.remove(channel, listener);
      if (err instanceof EventsUnavailableError) throw err;
      throw new EventsUnavailableError(`subscribing failed: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  private async remove(channel: string, listener: Listener): Promise<void> {
    const set = this.listeners.get(channel);
    if (!set) return;
    set.delete(listener);
    if (set.size > 0) return;
    this.listeners.delete(channel);
    await this.redis.unsubscribe(channel).catch((err: Error) => this.logger.debug({ err: { name: err.name, message: err.message }, channel }, 'unsubscribe failed'));
  }

  private dispatch(channel: string, raw: string): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      this.logger.warn({ channel }, 'dropped a non-JSON subscription event');
      return;
    }
    for (const listener of set) listener(message);
  }
}
