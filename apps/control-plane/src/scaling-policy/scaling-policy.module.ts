import { Module } from '@nestjs/common';
import { DeploymentsModule } from '../deployments/deployments.module';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { ScalingPolicyController } from './scaling-policy.controller';
import { ScalingPolicyService } from './scaling-policy.service';

/**
 * The scaling policy's API (REST here, GraphQL through the service). The writer and the repository come from
 * DeploymentsModule: PATCH /v1/deployments changes the modes through the same writer.
 */
@Module({
  imports: [DeploymentsModule],
  controllers: [ScalingPolicyController],
  providers: [ScalingPolicyService, DeploymentsRepository],
  exports: [ScalingPolicyService],
})
export class ScalingPolicyModule {}
