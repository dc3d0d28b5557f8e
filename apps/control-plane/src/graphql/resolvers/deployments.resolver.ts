import { Args, ID, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { z } from 'zod';
import { DEPLOYMENT_STATUSES } from '../../deployments/deployment';
import { DeploymentsService } from '../../deployments/deployments.service';
import { createDeploymentBody, deploymentIdParams, patchDeploymentBody, upgradeDeploymentBody } from '../../deployments/dto/deployment-input';
import type { DeploymentMetrics } from '../../metrics/deployment-metrics';
import type { Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs } from '../graphql-args';
import { Loaders, SLOS_PER_DEPLOYMENT, type RequestLoaders } from '../loaders/request-loaders';
import {
  AutoscalerModeEnum,
  CreateDeploymentInputModel,
  DeploymentModel,
  DeploymentPage,
  DeploymentStatusEnum,
  DesiredStateEnum,
  ParallelismInputModel,
  PartitionerModeEnum,
  UpgradeModeEnum,
} from '../models/deployment.model';
import { RescaleModeEnum } from '../models/live-rescale.model';
import { DeploymentMetricsModel } from '../models/metrics.model';
import { SloModel } from '../models/slo.model';

const listArgs = pageArgsSchema.extend({ status: z.enum(DEPLOYMENT_STATUSES).nullish().transform((s) => s ?? undefined) });

/** Deployments over GraphQL: DeploymentsService does the work (validation, quotas, reconciler), as for REST. */
@Resolver(() => DeploymentModel)
export class DeploymentsResolver {
  constructor(private readonly deploymentService: DeploymentsService) {}

  @Query(() => DeploymentModel, { description: 'One deployment; NOT_FOUND if the tenant has none with this id.' })
  async deployment(@Caller('read') principal: Principal, @Args('id', { type: () => ID }) id: string): Promise<DeploymentModel> {
    return DeploymentModel.from(await this.deploymentService.get(principal.tenantId, this.id(id)));
  }

  @Query(() => DeploymentPage, { description: "The tenant's deployments in id order." })
  async deployments(
    @Caller('read') principal: Principal,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
    @Args('status', { type: () => DeploymentStatusEnum, nullable: true }) status?: DeploymentStatusEnum,
  ): Promise<DeploymentPage> {
    const args = parseArgs(listArgs, { limit, cursor, status });
    const page = await this.deploymentService.list(principal.tenantId, args.limit, args.cursor, args.status);
    return { items: page.items.map(DeploymentModel.from), nextCursor: page.nextCursor };
  }

  @ResolveField(() => DeploymentMetricsModel, {
    nullable: true,
    description: 'The latest merged metrics (null while no subtask of it reports); subscribe to deploymentMetrics for pushes.',
  })
  async metrics(@Caller('read') principal: Principal, @Parent() deployment: DeploymentModel, @Loaders() loaders: RequestLoaders): Promise<DeploymentMetricsModel | null> {
    const json = await loaders.latestMetrics.load({ tenantId: principal.tenantId, deploymentId: deployment.id });
    return json ? DeploymentMetricsModel.from(JSON.parse(json) as DeploymentMetrics) : null;
  }

  @ResolveField(() => [SloModel], { description: `The deployment's latency SLOs (at most ${SLOS_PER_DEPLOYMENT}).` })
  async slos(@Caller('read') principal: Principal, @Parent() deployment: DeploymentModel, @Loaders() loaders: RequestLoaders): Promise<SloModel[]> {
    return (await loaders.slos.load({ tenantId: principal.tenantId, deploymentId: deployment.id })).map(SloModel.from);
  }

  @Mutation(() => DeploymentModel, { description: 'Create a deployment (write scope); the reconciler starts it unless SUSPENDED.' })
  async createDeployment(@Caller('write') principal: Principal, @Args('input') input: CreateDeploymentInputModel): Promise<DeploymentModel> {
    const body = parseArgs(createDeploymentBody, {
      name: input.name,
      ...(input.bundleId ? { bundleId: input.bundleId } : {}),
      ...(input.bundleName || input.bundleVersion ? { bundle: { name: input.bundleName, version: input.bundleVersion } } : {}),
      ...(input.parallelism ? { parallelism: parallelismBody(input.parallelism) } : {}),
      ...(input.topics ? { config: { topics: Object.fromEntries(input.topics.map((t) => [t.name, t.topic])) } } : {}),
      ...(input.desiredState ? { desiredState: input.desiredState } : {}),
      ...(input.partitionerMode ? { partitionerMode: input.partitionerMode } : {}),
      ...(input.autoscalerMode ? { autoscalerMode: input.autoscalerMode } : {}),
    });
    return DeploymentModel.from(await this.deploymentService.create(principal, body));
  }

  @Mutation(() => DeploymentModel, { description: 'RUNNING resumes, SUSPENDED suspends, CANCELLED cancels (write scope).' })
  async setDeploymentDesiredState(
    @Caller('write') principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('desiredState', { type: () => DesiredStateEnum }) desiredState: DesiredStateEnum,
  ): Promise<DeploymentModel> {
    const body = parseArgs(patchDeploymentBody, { desiredState });
    return DeploymentModel.from(await this.deploymentService.patch(principal, this.id(id), body));
  }

  @Mutation(() => DeploymentModel, {
    description: 'Change the parallelism (write scope); quotas apply. As PATCH /v1/deployments/{id}: live by default (a restart where the run cannot change live).',
  })
  async rescaleDeployment(
    @Caller('write') principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('parallelism', { type: () => ParallelismInputModel }) parallelism: ParallelismInputModel,
    @Args('mode', { type: () => RescaleModeEnum, defaultValue: RescaleModeEnum.live }) mode: RescaleModeEnum,
  ): Promise<DeploymentModel> {
    const body = parseArgs(patchDeploymentBody, { parallelism: parallelismBody(parallelism), rescaleMode: mode });
    return DeploymentModel.from(await this.deploymentService.patch(principal, this.id(id), body));
  }

  @Mutation(() => DeploymentModel, {
    description: 'Set what the dynamic partitioner may do (write scope); as PATCH /v1/deployments/{id} {partitionerMode}, it changes nothing else.',
  })
  async setDeploymentPartitionerMode(
    @Caller('write') principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('mode', { type: () => PartitionerModeEnum }) mode: PartitionerModeEnum,
  ): Promise<DeploymentModel> {
    const body = parseArgs(patchDeploymentBody, { partitionerMode: mode });
    return DeploymentModel.from(await this.deploymentService.patch(principal, this.id(id), body));
  }

  @Mutation(() => DeploymentModel, {
    description: 'Set what the autoscaler may do (write scope); as PATCH /v1/deployments/{id} {autoscalerMode}, it changes nothing else.',
  })
  async setDeploymentAutoscalerMode(
    @Caller('write') principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('mode', { type: () => AutoscalerModeEnum }) mode: AutoscalerModeEnum,
  ): Promise<DeploymentModel> {
    const body = parseArgs(patchDeploymentBody, { autoscalerMode: mode });
    return DeploymentModel.from(await this.deploymentService.patch(principal, this.id(id), body));
  }

  @Mutation(() => DeploymentModel, { description: 'Upgrade to another version of the same bundle (write scope).' })
  async upgradeDeployment(
    @Caller('write') principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('bundleId') bundleId: string,
    @Args('mode', { type: () => UpgradeModeEnum }) mode: UpgradeModeEnum,
  ): Promise<DeploymentModel> {
    const body = parseArgs(upgradeDeploymentBody, { bundleId, mode });
    return DeploymentModel.from(await this.deploymentService.upgrade(principal.tenantId, this.id(id), body));
  }

  private id(id: string): string {
    return parseArgs(deploymentIdParams, { id }).id;
  }
}

function parallelismBody(p: ParallelismInputModel): Record<string, unknown> {
  return {
    ...(p.default !== undefined && p.default !== null ? { default: p.default } : {}),
    ...(p.operators ? { operators: Object.fromEntries(p.operators.map((o) => [o.operatorId, o.parallelism])) } : {}),
  };
}
