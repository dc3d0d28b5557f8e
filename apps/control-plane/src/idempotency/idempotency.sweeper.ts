import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Pool } from '@weir/db';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { PG_POOL } from '../infrastructure/tokens';

const SWEEP_EVERY_MS = 10 * 60_000;
const SWEEP_BATCH = 5_000;

/**
 * Deletes expired idempotency records (through the SECURITY DEFINER idempotency_keys_sweep, as the sweep crosses
 * tenants). Every instance may run it: batches skip rows another sweeper holds. Expired records are already ignored
 * by claims, so a late sweep costs space only.
 */
@Injectable()
export class IdempotencySweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<number> {
    try {
      const { rows } = await this.pool.query<{ n: number }>('SELECT idempotency_keys_sweep($1) AS n', [SWEEP_BATCH]);
      return rows[0].n;
    } catch (err) {
      this.logger.warn({ err: { name: (err as Error).name, message: (err as Error).message } }, 'idempotency sweep failed');
      return 0;
    }
  }
}
