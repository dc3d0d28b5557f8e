import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';

/**
 * Redis pub/sub channels behind the GraphQL subscriptions, one per tenant and resource:
 * `weir:<WEIR_QUEUE_PREFIX>:<kind>:<tenantId>:<resourceId>`. The tenant is part of the channel, and subscribers
 * always take it from their authenticated principal, so a subscriber can never reach another tenant's channel by
 * guessing ids. Every control-plane instance subscribes for its own clients: fan-out across instances.
 */
export const EVENT_KINDS = ['metrics', 'status', 'slo', 'rollouts', 'scaling', 'moves', 'rescales'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export function eventChannel(prefix: string, kind: EventKind, tenantId: string, resourceId: string): string {
  return `weir:${prefix}:${kind}:${tenantId}:${resourceId}`;
}

/** What deployments publish on every observed-status change (channel kind `status`, resource: the deployment id). */
export interface DeploymentStatusEvent {
  readonly deploymentId: string;
  readonly status: string;
  readonly previousStatus: string | null;
  readonly desiredState: string;
  readonly reason: string;
  /** Epoch ms of the transition. */
  readonly at: number;
}

/** Publishes one event as JSON. For code outside Nest; inside the app, inject EventPublisher. */
export async function publishEvent(
  redis: Pick<Redis, 'publish'>,
  prefix: string,
  kind: EventKind,
  tenantId: string,
  resourceId: string,
  payload: object,
): Promise<void> {
  await redis.publish(eventChannel(prefix, kind, tenantId, resourceId), JSON.stringify(payload));
}

/**
 * The one way the app publishes subscription events (deployments call `deploymentStatus`). Publishing is best
 * effort: pub/sub has no history, a subscriber that is not connected misses the event, and a failed publish is
 * logged rather than failing the state change that caused it (the state itself lives in Postgres).
 */
@Injectable()
export class EventPublisher implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(@Inject(WEIR_CONFIG) config: WeirConfig, @Inject(ROOT_LOGGER) private readonly logger: Logger) {
    this.prefix = config.WEIR_QUEUE_PREFIX;
    // Its own connection: the shared health client fails fast offline, a publisher should ride out a blip.
    this.redis = new Redis(config.WEIR_REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      connectionName: 'weir-control-plane-events',
    });
    this.redis.on('error', (err: Error) => this.logger.debug({ err: { name: err.name, message: err.message } }, 'event publisher Redis error'));
  }

  deploymentStatus(tenantId: string, event: DeploymentStatusEvent): Promise<void> {
    return this.publish('status', tenantId, event.deploymentId, event);
  }

  async publish(kind: EventKind, tenantId: string, resourceId: string, payload: object): Promise<void> {
    try {
      await publishEvent(this.redis, this.prefix, kind, tenantId, resourceId, payload);
    } catch (err) {
      const { name, message } = err as Error;
      this.logger.warn({ err: { name, message }, kind, tenantId, resourceId }, 'publishing a subscription event failed');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedis(this.redis);
  }
}

/** Quits a client politely; one that never connected (lazy) or cannot quit is just disconnected. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'wait' || redis.status === 'end') {
    redis.disconnect();
    return;
  }
  await redis.quit().catch(() => redis.disconnect());
}
