import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Pool } from '@weir/db';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { PG_POOL } from '../infrastructure/tokens';

/** How often noted uses are written unless the options say otherwise: how late a key's lastUsedAt may be. */
export const API_KEY_USAGE_FLUSH_INTERVAL_MS = 60_000;
/** Keys whose use may wait for a flush at once (a few MB); a use of one more key is dropped, counted and logged. */
export const MAX_PENDING_KEY_USES = 100_000;

interface PendingUse {
  readonly tenantId: string;
  /** Epoch ms of the latest use noted since the last flush. */
  usedAt: number;
}

/**
 * When each API key was last used, without a database write per request: ApiKeyAuthenticator notes every
 * successful authentication (REST and GraphQL alike) here, a Map update with no await, and every flush interval
 * the latest use of each noted key is written in one statement. The flush crosses tenants, so it goes through the
 * SECURITY DEFINER function api_keys_mark_used (see its migration), which can only move a key's last_used_at
 * forward: every instance flushes on its own, in any order, and needs no leader.
 *
 * A failed flush keeps its uses for the next one (merged with those noted meanwhile). What waits is bounded by
 * MAX_PENDING_KEY_USES keys; past it a newly seen key's use is dropped, and the drops are logged, never silent.
 * The last flush runs at shutdown, in onModuleDestroy, before the pool closes (onApplicationShutdown).
 */
@Injectable()
export class ApiKeyUsage implements OnApplicationBootstrap, OnModuleDestroy {
  /** Overridable by tests; the cap on keys waiting for a flush. */
  protected readonly maxPending: number = MAX_PENDING_KEY_USES;
  private pending = new Map<string, PendingUse>();
  /** Uses not noted since the last flush because `pending` was full. */
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.intervalMs = options.apiKeyUsageFlushIntervalMs ?? API_KEY_USAGE_FLUSH_INTERVAL_MS;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.flush();
    if (this.pending.size > 0) this.logger.warn({ keys: this.pending.size }, 'API key uses not recorded: the last flush before shutdown failed');
  }

  /** Key `keyId` of `tenantId` was used at `at` (epoch ms). On every authenticated request: O(1), no I/O. */
  note(keyId: string, tenantId: string, at: number): void {
    const use = this.pending.get(keyId);
    if (use) {
      if (at > use.usedAt) use.usedAt = at;
    } else if (this.pending.size < this.maxPending) {
      this.pending.set(keyId, { tenantId, usedAt: at });
    } else if (this.dropped++ === 0) {
      // Once per flush interval; the next flush logs how many were dropped.
      this.logger.warn({ maxKeys: this.maxPending }, 'too many API keys used since the last flush: uses of further keys are dropped until it runs');
    }
  }

  /** Writes what was noted; a flush still running when the next is due makes that one a no-op. */
  flush(): Promise<void> {
    this.running ??= this.write().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async write(): Promise<void> {
    if (this.dropped > 0) {
      this.logger.warn({ dropped: this.dropped, maxKeys: this.maxPending }, 'API key uses dropped since the last flush: too many keys were waiting');
      this.dropped = 0;
    }
    if (this.pending.size === 0) return;
    // Taken whole: uses noted while the statement runs go to the next flush.
    const uses = this.pending;
    this.pending = new Map();
    const keyIds: string[] = [];
    const tenantIds: string[] = [];
    const usedAt: Date[] = [];
    for (const [keyId, use] of uses) {
      keyIds.push(keyId);
      tenantIds.push(use.tenantId);
      usedAt.push(new Date(use.usedAt));
    }
    try {
      await this.pool.query('SELECT api_keys_mark_used($1::text[], $2::text[], $3::timestamptz[])', [keyIds, tenantIds, usedAt]);
    } catch (err) {
      // Put back, merged with what was noted meanwhile (the later use wins); the cap still applies.
      for (const [keyId, use] of uses) this.note(keyId, use.tenantId, use.usedAt);
      this.logger.warn({ keys: uses.size, err: { name: (err as Error).name, message: (err as Error).message } }, 'recording API key uses failed; they are kept for the next flush');
    }
  }
}
