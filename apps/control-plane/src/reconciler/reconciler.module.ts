import { Module } from '@nestjs/common';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentStatusPublisher } from '../deployments/deployment-status.publisher';
import { PlacementModule } from '../placement/placement.module';
import { KeyGroupMoveEvents } from '../moves/key-group-move-events';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { RescaleEvents } from '../rescales/rescale-events';
import { RescalesRepository } from '../rescales/rescales.repository';
import { SavepointCommands } from '../savepoints/savepoint-commands';
import { MoveDriver } from './move-driver';
import { ReconcileRepository } from './reconcile.repository';
import { Reconciler } from './reconciler.service';
import { SnapshotProbe } from './snapshot-probe';

/**
 * The reconciler: the loop that drives every deployment's status toward its desired state (one state a file in
 * states/, the allowed transitions in transitions.ts), over placement's fleet view and commands. The deployments
 * API only kicks it; SavepointCommands is exported for the savepoints API (one set of Redis connections for both).
 * Each step also drives the deployment's key-group move in flight (MoveDriver), under the same row lock; RESCALING
 * drives a live rescale (live-rescale-driver.ts, deployment_rescales) the same way.
 */
@Module({
  imports: [PlacementModule],
  providers: [Reconciler, ReconcileRepository, SnapshotProbe, SavepointCommands, BundleReader, DeploymentStatusPublisher, MoveDriver, KeyGroupMovesRepository, KeyGroupMoveEvents, RescalesRepository, RescaleEvents],
  exports: [Reconciler, SavepointCommands],
})
export class ReconcilerModule {}
