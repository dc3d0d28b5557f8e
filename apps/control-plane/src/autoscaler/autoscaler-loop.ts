import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import type { Pool } from '@weir/db';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { PG_POOL } from '../infrastructure/tokens';
import { AutoscalerRepository } from './autoscaler.repository';
import { DeploymentAutoscaler } from './deployment-autoscaler';

/** How often due deployments are looked for; each is looked at once per its own interval (autoscaler.interval-ms). */
export const AUTOSCALER_SCAN_MS = 1_000;
/** Deployments looked at per scan; the rest wait for the next. */
const BATCH = 50;

/**
 * The autoscaler's controller loop, as the partitioner's: every control-plane instance runs it, which deployments are
 * due lives in Postgres (deployments.autoscaler_next_at), and each look claims the deployment's row and moves its next
 * look one interval on first, so a deployment is looked at once per interval whichever instances run. A look that
 * fails (Redis or Postgres away) is logged and rolled back, and the next scan tries again.
 */
@Injectable()
export class AutoscalerLoop implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly installation: string;
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private stopped = false;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly repository: AutoscalerRepository,
    private readonly autoscaler: DeploymentAutoscaler,
  ) {
    this.installation = config.WEIR_QUEUE_PREFIX;
    this.logger = logger.child({ component: 'autoscaler' });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.scan(), AUTOSCALER_SCAN_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.scanning;
  }

  /** One scan over due deployments; a scan still running when the next is due makes that one a no-op. */
  scan(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.scanning ??= this.scanOnce()
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'autoscaler scan failed'))
      .finally(() => {
        this.scanning = undefined;
      });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    const due = await this.repository.due(this.pool, this.installation, BATCH);
    for (const { tenantId, deploymentId } of due) {
      if (this.stopped) return;
      try {
        const look = await this.autoscaler.look(tenantId, deploymentId);
        if (look.decision) this.logger.info({ tenantId, deploymentId, decisionId: look.decision.decisionId, kind: look.decision.kind, toParallelism: look.decision.toParallelism }, 'autoscaler decision');
      } catch (err) {
        const { name, message } = err as Error;
        this.logger.warn({ tenantId, deploymentId, err: { name, message } }, 'an autoscaler look failed; will retry');
      }
    }
  }
}
