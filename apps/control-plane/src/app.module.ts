import { Module, type DynamicModule } from '@nestjs/common';
import pino from 'pino';
import { BundlesModule } from './bundles/bundles.module';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, WEIR_CONFIG, type ControlPlaneOptions } from './control-plane-options';
import { DeploymentsModule } from './deployments/deployments.module';
import { EventsModule } from './events/events.module';
import { GraphqlModule } from './graphql/graphql.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { InfrastructureModule } from './infrastructure/infrastructure.module';
import { MetricsModule } from './metrics/metrics.module';
import { KeyGroupMovesModule } from './moves/key-group-moves.module';
import { PartitionerModule } from './partitioner/partitioner.module';
import { AutoscalerModule } from './autoscaler/autoscaler.module';
import { ScalingPolicyModule } from './scaling-policy/scaling-policy.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';
import { RulesModule } from './rules/rules.module';
import { SavepointsModule } from './savepoints/savepoints.module';
import { SlosModule } from './slos/slos.module';
import { TenancyModule } from './tenancy/tenancy.module';
import { WorkersModule } from './workers/workers.module';

/** The control plane: built from options, so tests and tools can run it with their own configuration. */
@Module({})
export class AppModule {
  static forRoot(options: ControlPlaneOptions, logger: pino.Logger): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [InfrastructureModule, EventsModule, HealthModule, WorkersModule, RateLimitsModule, TenancyModule, IdempotencyModule, BundlesModule, MetricsModule, SlosModule, GraphqlModule, DeploymentsModule, RulesModule, SavepointsModule, KeyGroupMovesModule, PartitionerModule, AutoscalerModule, ScalingPolicyModule],
      providers: [
        { provide: CONTROL_PLANE_OPTIONS, useValue: options },
        { provide: WEIR_CONFIG, useValue: options.config },
        { provide: ROOT_LOGGER, useValue: logger },
      ],
      exports: [CONTROL_PLANE_OPTIONS, WEIR_CONFIG, ROOT_LOGGER],
    };
  }
}
