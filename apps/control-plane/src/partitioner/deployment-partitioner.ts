import { Inject, Injectable } from '@nestjs/common';
import type { CheckpointManifest } from '@weir/checkpoint';
import type { WeirConfig } from '@weir/config';
import { withTenant, type Pool, type PoolClient } from '@weir/db';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { changedKeyGroups, planPartitioning, type PartitioningDecision, type PartitioningPolicy } from '@weir/partitioner';
import type { SplitKeys } from '@weir/protocol';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, WEIR_CONFIG, type ControlPlaneOptions } from '../control-plane-options';
import { BundleReader, type DeployableBundle } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun, Routing } from '../deployments/deployment';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { PG_POOL } from '../infrastructure/tokens';
import { CommandGateway } from '../placement/command-gateway';
import { staleAfterMs } from '../metrics/metrics-ingestor';
import { MetricsStore } from '../metrics/metrics-store';
import { newMoveId, type KeyGroupMove } from '../moves/key-group-move';
import { KeyGroupMoveEvents } from '../moves/key-group-move-events';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { resolveMoves } from '../moves/move-request';
import { routingOfRun } from '../placement/routing';
import { runParallelism } from '../placement/subtask-plan';
import { Reconciler } from '../reconciler/reconciler.service';
import { CheckpointSizes } from './checkpoint-sizes';
import { isContinuing, lastChangedAtMs } from './cool-downs';
import { moveRequestOf } from './decision-moves';
import { describeDecision, inputsOf, kindOf, plannedOf, shouldRecord, signatureOf } from './decision-record';
import { detect } from './detection';
import { keyedOperatorLoads, type OperatorLoad } from './operator-loads';
import { partitionerEligibility } from './partitioner-eligibility';
import { measuredMoveOf, MOVE_COST_WINDOW_MS, moveCostBudget, type MoveCostBudget } from './move-cost';
import { newDecisionId, PARTITIONER_REQUESTER, type DecidingMode, type ScalingDecision } from './scaling-decision';
import { ScalingDecisionEvents } from './scaling-decision-events';
import { ScalingDecisionsRepository } from './scaling-decisions.repository';
import { tableAfter } from './split-tables';
import { stateBytesFromManifest } from './state-bytes';
import { partitioningPolicyOf, policyViewOf, type PartitionerSettings } from '../scaling/scaling-policy';
import { ScalingPolicyRepository } from '../scaling/scaling-policy.repository';

/** What one look at a deployment did. */
export interface PartitionerLook {
  /** Why nothing was planned (not claimed: another instance has it, or it is not due); null when it was planned. */
  readonly skipped: string | null;
  /** Operators that could not be planned this time, and why (a subtask's snapshot missing, say). */
  readonly waiting: readonly string[];
  readonly decisions: readonly ScalingDecision[];
  /** The key-group move asked for in mode auto. */
  readonly move: KeyGroupMove | null;
  /** The split tables to send in mode auto (after commit: Redis is never waited on under the row lock). */
  readonly splits: readonly SplitKeysRequest[];
}

/** A split-keys command for the worker of the run's process 0. */
export interface SplitKeysRequest {
  readonly workerId: string;
  readonly command: Omit<SplitKeys, 'v' | 'type' | 'issuedAt'>;
}

/**
 * One look of the dynamic partitioner at one deployment: the subtasks' latest snapshots and the latest checkpoint's
 * manifest (read before the transaction: Redis and S3 are never waited on under the row lock) → per keyed operator the
 * load model on the run's routing, state bytes estimated from the manifest →
 * planPartitioning (splittable windows may have hot keys split: split-tables.ts translates between the engine's
 * table and the planner's view) and the cool-downs of the moves and splits made → the decisions worth keeping
 * recorded, and in mode auto the first one's moves recorded as a key-group move (the same record and reconciler drive
 * as a tenant's POST) and its splits sent to the run as its new split table. All of it in one transaction holding
 * the deployment's row, so of several control-plane instances one looks per interval, and a look never races the
 * reconciler's step or a tenant's move request; published and kicked after commit.
 */
@Injectable()
export class DeploymentPartitioner {
  private readonly installation: string;
  private readonly staleAfterMs: number;
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly metrics: MetricsStore,
    private readonly checkpoints: CheckpointSizes,
    private readonly decisions: ScalingDecisionsRepository,
    private readonly deployments: DeploymentsRepository,
    private readonly moves: KeyGroupMovesRepository,
    private readonly bundles: BundleReader,
    private readonly reconciler: Reconciler,
    private readonly decisionEvents: ScalingDecisionEvents,
    private readonly moveEvents: KeyGroupMoveEvents,
    private readonly policies: ScalingPolicyRepository,
    private readonly gateway: CommandGateway,
  ) {
    this.installation = config.WEIR_QUEUE_PREFIX;
    this.staleAfterMs = staleAfterMs(options);
    this.logger = logger.child({ component: 'partitioner' });
  }

  async look(tenantId: string, deploymentId: string, nowMs = Date.now()): Promise<PartitionerLook> {
    // Redis and S3 before the transaction: neither is waited on under the deployment's row lock.
    const [snapshots] = await this.metrics.latestSnapshots([{ tenantId, jobId: deploymentId }], nowMs, this.staleAfterMs);
    // Without snapshots nothing is planned: S3 is not asked.
    const manifest = snapshots.length ? await this.checkpoints.latestManifest(tenantId, deploymentId) : null;
    const look = await withTenant(this.pool, tenantId, (client) => this.decide(client, deploymentId, snapshots, manifest, nowMs));
    for (const decision of look.decisions) await this.decisionEvents.publish(decision);
    if (look.move) {
      this.reconciler.kick();
      await this.moveEvents.publish(look.move);
    }
    for (const { workerId, command } of look.splits) {
      // Lost, it is planned again: the next look sees the table not in effect in the subtasks' snapshots.
      await this.gateway.sendSplitKeys(workerId, command).catch((err: Error) => {
        this.logger.warn({ tenantId, deploymentId, operatorId: command.operatorId, err: { name: err.name, message: err.message } }, 'sending a split table failed');
      });
    }
    if (look.waiting.length) this.logger.debug({ tenantId, deploymentId, waiting: look.waiting }, 'operators not planned this time');
    return look;
  }

  private async decide(
    client: PoolClient,
    deploymentId: string,
    snapshots: readonly SubtaskMetricsSnapshot[],
    manifest: CheckpointManifest | null,
    nowMs: number,
  ): Promise<PartitionerLook> {
    const deployment = await this.decisions.claim(client, this.installation, deploymentId);
    if (!deployment) return { skipped: 'not claimed: another instance holds it, or it is not due', waiting: [], decisions: [], move: null, splits: [] };
    // The policy as it stands at this look: a tenant's change lands between two looks (the row lock), never inside one.
    const deployed = await this.bundles.byId(client, deployment.bundleId);
    if (!deployed) throw new Error(`bundle ${deployment.bundleId} of deployment ${deploymentId} is missing (bundles in use cannot be deleted)`);
    const settings = policyViewOf(deployment, deployed.maxParallelism, await this.policies.find(client, deploymentId)).policy.partitioner;
    await this.decisions.scheduleNext(client, deploymentId, settings.intervalMs);
    const latestRun = (await this.deployments.runs(client, deploymentId, 1))[0] ?? null;
    const eligibility = partitionerEligibility(deployment, latestRun, await this.moves.pending(client, deploymentId));
    if (!eligibility.ok) return { skipped: eligibility.why, waiting: [], decisions: [], move: null, splits: [] };
    const run = eligibility.run;
    const bundle = await this.bundles.byId(client, run.bundleId);
    if (!bundle) throw new Error(`bundle ${run.bundleId} of run ${run.runNo} is missing (bundles in use cannot be deleted)`);
    const routing = routingOfRun(run, bundle);
    const mode = deployment.partitionerMode as DecidingMode;
    const waiting: string[] = [];
    const recorded: ScalingDecision[] = [];
    let move: KeyGroupMove | null = null;
    const splits: SplitKeysRequest[] = [];
    const stateBytesOf = (operatorId: string, maxParallelism: number) => (manifest ? stateBytesFromManifest(manifest, operatorId, maxParallelism) : null);
    for (const result of keyedOperatorLoads(bundle.operatorIds, routing, runParallelism(run.subtasks), snapshots, stateBytesOf)) {
      if (!result.ok) {
        waiting.push(`${result.operatorId}: ${result.why}`);
        continue;
      }
      const operator = result.operator;
      const planned = await this.plan(client, deploymentId, operator, settings, nowMs);
      if (!planned) continue;
      const { decision, policy, moveCost } = planned;
      // One move in flight per deployment: once this look asked for one, another operator's moves wait for a later look.
      if (mode === 'auto' && move && decision.moves.length) continue;
      const decisionId = newDecisionId(nowMs);
      const detection = detect(operator.layout, operator.load, decision, policy);
      let reason = describeDecision(operator.operatorId, decision, detection, mode);
      if (moveCost.reason) reason = `${reason}; ${moveCost.reason}`.slice(0, 4000);
      if (operator.windows) reason = `${reason}; a window operator: its key groups are not moved live${operator.splittable ? ', its hot keys are split' : ''}`.slice(0, 4000);
      let moveId: string | null = null;
      if (mode === 'auto' && decision.moves.length) {
        const requested = await this.requestMove(client, deployment, run, bundle, routing, operator.operatorId, decision, decisionId);
        if (typeof requested === 'string') reason = `${reason}; not made: ${requested}`.slice(0, 4000);
        else [move, moveId] = [requested, requested.moveId];
      }
      const keySplits = mode === 'auto' ? tableAfter(decision, operator.splitTable, operator.layout.owners, operator.load.keyGroupRates) : null;
      if (keySplits) {
        const command = { idempotencyKey: `split-${deploymentId}-${decisionId}`, tenantId: deployment.tenantId, jobId: deploymentId, runNo: run.runNo, operatorId: operator.operatorId, splits: keySplits.map((s) => ({ ...s, parts: [...s.parts], weights: [...s.weights] })) };
        splits.push({ workerId: run.workerId, command: { ...command, reason: `partitioner decision ${decisionId}` } });
      }
      recorded.push(
        await this.decisions.insert(client, {
          tenantId: deployment.tenantId,
          deploymentId,
          decisionId,
          runNo: run.runNo,
          source: 'partitioner',
          operatorId: operator.operatorId,
          mode,
          kind: kindOf(decision),
          reason,
          keyGroups: changedKeyGroups(decision),
          imbalanceBefore: decision.imbalanceBefore,
          imbalanceAfter: decision.imbalanceAfter,
          unfinished: decision.unfinished,
          detection,
          decision: plannedOf(decision, keySplits ?? undefined),
          inputs: { ...inputsOf(operator), policy: settings, moveCost },
          moveId,
          fromParallelism: null,
          toParallelism: null,
        }),
      );
    }
    return { skipped: null, waiting, decisions: recorded, move, splits };
  }

  /**
   * planPartitioning for one operator with the deployment's policy, its cool-downs, its continuation and the budget the
   * latest move's cost leaves (move-cost.ts); null when the decision is not worth a row.
   */
  private async plan(
    client: PoolClient,
    deploymentId: string,
    operator: OperatorLoad,
    settings: PartitionerSettings,
    nowMs: number,
  ): Promise<{ decision: PartitioningDecision; policy: PartitioningPolicy; moveCost: MoveCostBudget } | null> {
    const latestMove = await this.moves.latestDone(client, deploymentId, operator.operatorId, nowMs - MOVE_COST_WINDOW_MS);
    const measured = latestMove?.report && latestMove.finishedAt ? measuredMoveOf(latestMove.moveId, latestMove.finishedAt.getTime(), latestMove.report.moved) : null;
    const moveCost = moveCostBudget(measured, settings.moveBudget, settings.maxMovePauseMs);
    // A window operator's key groups stay where they are: over the Kafka exchange an adopter ahead in event time would
    // drop the moved key group's records read behind it as late (docs/partitioner.md, "Not built yet").
    const policy = partitioningPolicyOf(settings, operator.windows ? 0 : moveCost.budget);
    const latest = await this.decisions.latest(client, deploymentId, operator.operatorId);
    const changes = [
      ...(await this.moves.changedSince(client, deploymentId, operator.operatorId, nowMs - policy.coolDownMs)),
      ...(await this.decisions.splitChangesSince(client, deploymentId, operator.operatorId, nowMs - policy.coolDownMs)),
    ];
    const decision = planPartitioning({
      layout: operator.layout,
      load: operator.load,
      policy,
      nowMs,
      lastChangedAtMs: lastChangedAtMs(changes),
      splittable: operator.splittable,
      continuing: isContinuing(latest && { unfinished: latest.decision.unfinished, moveState: latest.moveState }),
    });
    const last = latest && { signature: signatureOf(latest.decision.decision), decidedAtMs: latest.decision.decidedAt.getTime() };
    return shouldRecord(decision, last, nowMs, policy.coolDownMs) ? { decision, policy, moveCost } : null;
  }

  /**
   * The decision's moves recorded PENDING as the moves API records a tenant's, checked by the same resolveMoves against
   * the run; the reconciler sends and settles it. A string says why it could not be asked for (a planner bug, or a move
   * recorded meanwhile), for the decision's reason.
   */
  private async requestMove(
    client: PoolClient,
    deployment: Deployment,
    run: DeploymentRun,
    bundle: DeployableBundle,
    routing: Routing,
    operatorId: string,
    decision: PartitioningDecision,
    decisionId: string,
  ): Promise<KeyGroupMove | string> {
    const body = moveRequestOf(operatorId, decision, decisionId);
    if (!body) return 'it moves nothing';
    const resolved = resolveMoves(body, {
      bundle: `${bundle.name}@${bundle.version}`,
      operatorIds: bundle.operatorIds,
      maxParallelism: bundle.maxParallelism,
      parallelism: runParallelism(run.subtasks),
      routing,
    });
    if (!resolved.ok) {
      const why = resolved.errors.map((e) => `${e.name}: ${e.reason}`).join('; ');
      this.logger.error({ tenantId: deployment.tenantId, deploymentId: deployment.id, decisionId, why }, 'the partitioner planned moves the run refuses');
      return `the run refuses the moves (${why})`;
    }
    const inserted = await this.moves.insert(client, {
      tenantId: deployment.tenantId,
      deploymentId: deployment.id,
      moveId: newMoveId(),
      runNo: run.runNo,
      operatorId,
      moves: resolved.moves,
      reason: body.reason ?? '',
      requestedBy: PARTITIONER_REQUESTER,
    });
    return inserted ?? 'another key-group move was recorded meanwhile';
  }
}
