import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { ReconcilerModule } from '../reconciler/reconciler.module';
import { BundleReader } from './bundle-reader';
import { DeploymentsController } from './deployments.controller';
import { DeploymentsRepository } from './deployments.repository';
import { DeploymentsService } from './deployments.service';

/** Deployments: the REST API and its service; the reconciler (its own module, with placement's) carries them out. */
@Module({
  imports: [EventsModule, ReconcilerModule],
  controllers: [DeploymentsController],
  providers: [DeploymentsService, DeploymentsRepository, BundleReader],
  exports: [DeploymentsService, ReconcilerModule],
})
export class DeploymentsModule {}
