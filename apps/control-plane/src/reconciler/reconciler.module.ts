import { Module } from '@nestjs/common';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentStatusPublisher } from '../deployments/deployment-status.publisher';
import { PlacementModule } from '../placement/placement.module';
import { SavepointCommands } from '../savepoints/savepoint-commands';
import { ReconcileRepository } from './reconcile.repository';
import { Reconciler } from './reconciler.service';
import { SnapshotProbe } from './snapshot-probe';

/**
 * The reconciler: the loop that drives every deployment's status toward its desired state (one state a file in
 * states/, the allowed transitions in transitions.ts), over placement's fleet view and commands. The deployments
 * API only kicks it; SavepointCommands is exported for the savepoints API (one set of Redis connections for both).
 */
@Module({
  imports: [PlacementModule],
  providers: [Reconciler, ReconcileRepository, SnapshotProbe, SavepointCommands, BundleReader, DeploymentStatusPublisher],
  exports: [Reconciler, SavepointCommands],
})
export class ReconcilerModule {}
