import { Module } from '@nestjs/common';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentsModule } from '../deployments/deployments.module';
import { PlacementModule } from '../placement/placement.module';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { KeyGroupMoveEvents } from '../moves/key-group-move-events';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { CheckpointSizes } from './checkpoint-sizes';
import { DeploymentPartitioner } from './deployment-partitioner';
import { PartitionerLoop } from './partitioner-loop';
import { ScalingDecisionEvents } from './scaling-decision-events';
import { ScalingDecisionsController } from './scaling-decisions.controller';
import { ScalingDecisionsRepository } from './scaling-decisions.repository';
import { ScalingDecisionsService } from './scaling-decisions.service';
import { ScalingPolicyRepository } from '../scaling/scaling-policy.repository';

/**
 * The dynamic partitioner in the control plane: the loop that plans every running multi-process deployment whose
 * partitioner is on (libs/partitioner decides; this module reads the metrics, records, publishes and, in mode auto,
 * asks for the moves through the key-group moves record the reconciler drives), and its decisions' API. GraphQL reads
 * them through the service. MetricsStore comes from the global MetricsModule, the Reconciler from DeploymentsModule.
 */
@Module({
  imports: [DeploymentsModule, PlacementModule],
  controllers: [ScalingDecisionsController],
  providers: [
    PartitionerLoop,
    DeploymentPartitioner,
    CheckpointSizes,
    ScalingDecisionsRepository,
    ScalingDecisionsService,
    ScalingDecisionEvents,
    DeploymentsRepository,
    BundleReader,
    KeyGroupMovesRepository,
    KeyGroupMoveEvents,
    ScalingPolicyRepository,
  ],
  // The decisions record and its events are the autoscaler's too (one table, one channel).
  exports: [ScalingDecisionsService, ScalingDecisionsRepository, ScalingDecisionEvents, DeploymentPartitioner, PartitionerLoop],
})
export class PartitionerModule {}
