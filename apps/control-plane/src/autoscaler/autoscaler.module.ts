import { Module } from '@nestjs/common';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentsModule } from '../deployments/deployments.module';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { PartitionerModule } from '../partitioner/partitioner.module';
import { PlacementModule } from '../placement/placement.module';
import { AutoscalerLoop } from './autoscaler-loop';
import { AutoscalerRepository } from './autoscaler.repository';
import { DeploymentAutoscaler } from './deployment-autoscaler';
import { ScalingPolicyRepository } from '../scaling/scaling-policy.repository';

/**
 * The autoscaler in the control plane: the loop that looks at every running deployment whose autoscaler is on (DS2's
 * rates from the metrics store, the SLO, the fleet's free slots, the partitioner's hot keys), records and publishes
 * its decisions beside the partitioner's (PartitionerModule's record and events), and in mode auto asks for the live
 * rescale through DeploymentsService. MetricsStore comes from the global MetricsModule, the Reconciler from
 * DeploymentsModule, FleetRepository from PlacementModule.
 */
@Module({
  imports: [DeploymentsModule, PartitionerModule, PlacementModule],
  providers: [AutoscalerLoop, DeploymentAutoscaler, AutoscalerRepository, DeploymentsRepository, BundleReader, KeyGroupMovesRepository, ScalingPolicyRepository],
  exports: [DeploymentAutoscaler, AutoscalerLoop],
})
export class AutoscalerModule {}
