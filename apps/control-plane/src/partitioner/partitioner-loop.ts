import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import type { Pool } from '@weir/db';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { PG_POOL } from '../infrastructure/tokens';
import { DueLookLoop } from '../scaling/due-look-loop';
import { DeploymentPartitioner } from './deployment-partitioner';
import { ScalingDecisionsRepository } from './scaling-decisions.repository';

/** The partitioner's controller loop: each due deployment (deployments.partitioner_next_at) planned once per interval. */
@Injectable()
export class PartitionerLoop implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly loop: DueLookLoop;

  constructor(
    @Inject(PG_POOL) pool: Pool,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
    decisions: ScalingDecisionsRepository,
    partitioner: DeploymentPartitioner,
  ) {
    const installation = config.WEIR_QUEUE_PREFIX;
    this.loop = new DueLookLoop(
      'partitioner',
      { due: (limit) => decisions.due(pool, installation, limit), look: async (tenantId, deploymentId) => void (await partitioner.look(tenantId, deploymentId)) },
      logger.child({ component: 'partitioner' }),
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
