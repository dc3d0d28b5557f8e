import { Module } from '@nestjs/common';
import { EventsModule } from '../graphql/events.module';
import { CommandGateway } from '../placement/command-gateway';
import { FleetRepository } from '../placement/fleet.repository';
import { ReconcileRepository } from '../reconciler/reconcile.repository';
import { Reconciler } from '../reconciler/reconciler.service';
import { SnapshotProbe } from '../reconciler/snapshot-probe';
import { SavepointCommands } from '../savepoints/savepoint-commands';
import { BundleReader } from './bundle-reader';
import { DeploymentStatusPublisher } from './deployment-status.publisher';
import { DeploymentsController } from './deployments.controller';
import { DeploymentsRepository } from './deployments.repository';
import { DeploymentsService } from './deployments.service';

/** Deployments: the REST API, the reconciler that carries it out, and placement/dispatch to workers. */
@Module({
  imports: [EventsModule],
  controllers: [DeploymentsController],
  providers: [
    DeploymentsService,
    DeploymentsRepository,
    BundleReader,
    DeploymentStatusPublisher,
    Reconciler,
    ReconcileRepository,
    FleetRepository,
    CommandGateway,
    SavepointCommands,
    SnapshotProbe,
  ],
  exports: [DeploymentsService, Reconciler, SavepointCommands],
})
export class DeploymentsModule {}
