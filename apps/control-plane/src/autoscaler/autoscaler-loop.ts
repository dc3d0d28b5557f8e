import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import type { Pool } from '@weir/db';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { PG_POOL } from '../infrastructure/tokens';
import { DueLookLoop } from '../scaling/due-look-loop';
import { AutoscalerRepository } from './autoscaler.repository';
import { DeploymentAutoscaler } from './deployment-autoscaler';

/** The autoscaler's controller loop: each due deployment (deployments.autoscaler_next_at) looked at once per interval. */
@Injectable()
export class AutoscalerLoop implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly loop: DueLookLoop;

  constructor(
    @Inject(PG_POOL) pool: Pool,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
    repository: AutoscalerRepository,
    autoscaler: DeploymentAutoscaler,
  ) {
    const installation = config.WEIR_QUEUE_PREFIX;
    const log = logger.child({ component: 'autoscaler' });
    this.loop = new DueLookLoop(
      'autoscaler',
      {
        due: (limit) => repository.due(pool, installation, limit),
        look: async (tenantId, deploymentId) => {
          const { decision } = await autoscaler.look(tenantId, deploymentId);
          if (decision) log.info({ tenantId, deploymentId, decisionId: decision.decisionId, kind: decision.kind, toParallelism: decision.toParallelism }, 'autoscaler decision');
        },
      },
      log,
    );
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.loop.stop();
  }

  scan(): Promise<void> {
    return this.loop.scan();
  }
}
