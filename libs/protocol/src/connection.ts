import type { WeirConfig } from '@weir/config';
import type { ConnectionOptions } from 'bullmq';
import { ProtocolTimeoutError } from './errors';

/** What every protocol helper needs from the configuration. */
export type ProtocolConfig = Pick<WeirConfig, 'WEIR_REDIS_URL' | 'WEIR_QUEUE_PREFIX'>;

/**
 * Producers fail fast while Redis is away (no offline queue): a heartbeat that cannot be sent now is worthless
 * later, and callers decide themselves whether to retry.
 */
export function producerConnection(config: ProtocolConfig): ConnectionOptions {
  return { url: config.WEIR_REDIS_URL, enableOfflineQueue: false, maxRetriesPerRequest: 1 };
}

/** Consumers block on Redis; BullMQ requires maxRetriesPerRequest null for them and reconnects on its own. */
export function consumerConnection(config: ProtocolConfig): ConnectionOptions {
  return { url: config.WEIR_REDIS_URL, maxRetriesPerRequest: null };
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProtocolTimeoutError(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
