import { Module } from '@nestjs/common';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentsModule } from '../deployments/deployments.module';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { SavepointsController } from './savepoints.controller';
import { SavepointsService } from './savepoints.service';

/** Savepoints of deployments: trigger (and stop-with-savepoint), list, status, dispose, restore dry run. */
@Module({
  imports: [DeploymentsModule],
  controllers: [SavepointsController],
  // SavepointCommands comes from DeploymentsModule (the reconciler sends stop-with-savepoint through it too).
  providers: [SavepointsService, DeploymentsRepository, BundleReader],
})
export class SavepointsModule {}
