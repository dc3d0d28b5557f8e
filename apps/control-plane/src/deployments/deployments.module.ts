import { Module } from '@nestjs/common';
import { BundlesModule } from '../bundles/bundles.module';
import { EventsModule } from '../events/events.module';
import { ReconcilerModule } from '../reconciler/reconciler.module';
import { BundleReader } from './bundle-reader';
import { DeploymentsController } from './deployments.controller';
import { DeploymentsRepository } from './deployments.repository';
import { DeploymentsService } from './deployments.service';
import { ScalingPolicyRepository } from '../scaling/scaling-policy.repository';
import { ScalingPolicyWriter } from '../scaling/scaling-policy.writer';

/** Deployments: the REST API and its service; the reconciler (its own module, with placement's) carries them out. */
@Module({
  imports: [EventsModule, ReconcilerModule, BundlesModule],
  controllers: [DeploymentsController],
  providers: [DeploymentsService, DeploymentsRepository, BundleReader, ScalingPolicyRepository, ScalingPolicyWriter],
  // The scaling policy's writer is the policy API's too (one path for every change, PATCH's modes included).
  exports: [DeploymentsService, ReconcilerModule, ScalingPolicyWriter, ScalingPolicyRepository],
})
export class DeploymentsModule {}
