import { Inject } from '@nestjs/common';
import { Args, ID, Resolver, Subscription } from '@nestjs/graphql';
import type { WeirConfig } from '@weir/config';
import { WEIR_CONFIG } from '../../control-plane-options';
import type { DeploymentMetrics } from '../../metrics/deployment-metrics';
import type { KeyGroupMoveMessage } from '../../moves/key-group-move-events';
import type { RescaleMessage } from '../../rescales/rescale-events';
import { NotFoundProblem } from '../../problems/problem.exception';
import type { SloStatusMessage } from '../../slos/slo';
import { TenantDb, type Principal } from '../../tenancy';
import { eventChannel, type DeploymentStatusEvent, type EventKind } from '../../events/events';
import { Caller } from '../graphql-auth';
import { parseId } from '../graphql-args';
import type { ScalingDecisionMessage } from '../../partitioner/scaling-decision-events';
import { DeploymentStatusChangeModel, RuleRolloutProgressModel, ScalingDecisionModel, type RuleRolloutMessage } from '../models/events.model';
import { KeyGroupMoveModel } from '../models/key-group-move.model';
import { LiveRescaleModel } from '../models/live-rescale.model';
import { DeploymentMetricsModel } from '../models/metrics.model';
import { SloStatusUpdateModel } from '../models/slo.model';
import { RedisPubSub } from '../../events/redis-pubsub';

/**
 * Push over graphql-ws, fanned out across control-plane instances through Redis pub/sub. The channel's tenant is
 * always the caller's own (never an argument), and the resource must exist for that tenant (NOT_FOUND otherwise),
 * so another tenant's ids lead nowhere.
 */
@Resolver()
export class SubscriptionsResolver {
  private readonly prefix: string;

  constructor(
    private readonly pubsub: RedisPubSub,
    private readonly db: TenantDb,
    @Inject(WEIR_CONFIG) config: WeirConfig,
  ) {
    this.prefix = config.WEIR_QUEUE_PREFIX;
  }

  @Subscription(() => DeploymentMetricsModel, {
    description: "The deployment's merged metrics, at most once a second while its workers report.",
    resolve: (m: DeploymentMetrics) => DeploymentMetricsModel.from(m),
  })
  async deploymentMetrics(@Caller('read') principal: Principal, @Args('deploymentId', { type: () => ID }) deploymentId: string) {
    return this.listen<DeploymentMetrics>('metrics', principal, await this.deployment(principal, deploymentId));
  }

  @Subscription(() => DeploymentStatusChangeModel, {
    description: "Every change of the deployment's observed status, with its reason.",
    resolve: (e: DeploymentStatusEvent) => DeploymentStatusChangeModel.from(e),
  })
  async deploymentStatus(@Caller('read') principal: Principal, @Args('deploymentId', { type: () => ID }) deploymentId: string) {
    return this.listen<DeploymentStatusEvent>('status', principal, await this.deployment(principal, deploymentId));
  }

  @Subscription(() => SloStatusUpdateModel, {
    description: "The SLO's status after every evaluation (once a minute while its deployment reports), with breaches and recoveries.",
    resolve: (m: SloStatusMessage) => SloStatusUpdateModel.fromMessage(m),
  })
  async sloStatus(@Caller('read') principal: Principal, @Args('sloId', { type: () => ID }) sloId: string) {
    const id = parseId('sloId', sloId);
    await this.mustExist(principal, 'SELECT 1 FROM slos WHERE id = $1', id, 'SLO');
    return this.listen<SloStatusMessage>('slo', principal, id);
  }

  @Subscription(() => RuleRolloutProgressModel, {
    description:
      'Rule-set rollout progress on the deployment (per-subtask acknowledgements), published by the rules service ' +
      'on every rollout step.',
    resolve: (m: RuleRolloutMessage) => RuleRolloutProgressModel.from(m),
  })
  async ruleRollouts(@Caller('read') principal: Principal, @Args('deploymentId', { type: () => ID }) deploymentId: string) {
    return this.listen<RuleRolloutMessage>('rollouts', principal, await this.deployment(principal, deploymentId));
  }

  @Subscription(() => ScalingDecisionModel, {
    description:
      "The dynamic partitioner's and the autoscaler's decisions on the deployment as they are recorded, with inputs, " +
      'evidence and reason. Balanced intervals publish nothing; Deployment.scalingDecisions lists them.',
    resolve: (m: ScalingDecisionMessage) => ScalingDecisionModel.from(m),
  })
  async scalingDecisions(@Caller('read') principal: Principal, @Args('deploymentId', { type: () => ID }) deploymentId: string) {
    return this.listen<ScalingDecisionMessage>('scaling', principal, await this.deployment(principal, deploymentId));
  }

  @Subscription(() => KeyGroupMoveModel, {
    description:
      "The deployment's key-group moves as they are requested (PENDING) and as they settle (DONE with the report, or " +
      'FAILED with the reason). Apart from scalingDecisions, which carries why the partitioner or autoscaler decided ' +
      'something; a move is what carries such a decision out.',
    resolve: (m: KeyGroupMoveMessage) => KeyGroupMoveModel.fromMessage(m),
  })
  async keyGroupMoves(@Caller('read') principal: Principal, @Args('deploymentId', { type: () => ID }) deploymentId: string) {
    return this.listen<KeyGroupMoveMessage>('moves', principal, await this.deployment(principal, deploymentId));
  }

  @Subscription(() => LiveRescaleModel, {
    description: "The deployment's live rescales as they go: each change of state, and process 0's progress (key groups moved of total) while MOVING.",
    resolve: (m: RescaleMessage) => LiveRescaleModel.fromMessage(m),
  })
  async liveRescales(@Caller('read') principal: Principal, @Args('deploymentId', { type: () => ID }) deploymentId: string) {
    return this.listen<RescaleMessage>('rescales', principal, await this.deployment(principal, deploymentId));
  }

  private async deployment(principal: Principal, deploymentId: string): Promise<string> {
    const id = parseId('deploymentId', deploymentId);
    await this.mustExist(principal, 'SELECT 1 FROM deployments WHERE id = $1', id, 'deployment');
    return id;
  }

  /** Under the caller's RLS: another tenant's row is invisible, so it reads as NOT_FOUND. */
  private async mustExist(principal: Principal, sql: string, id: string, what: string): Promise<void> {
    const found = (await this.db.read(principal.tenantId, { text: sql, values: [id] })).length !== 0;
    if (!found) throw new NotFoundProblem(what, id);
  }

  private listen<T>(kind: EventKind, principal: Principal, id: string): Promise<AsyncIterableIterator<T>> {
    return this.pubsub.iterator<T>(eventChannel(this.prefix, kind, principal.tenantId, id));
  }
}
