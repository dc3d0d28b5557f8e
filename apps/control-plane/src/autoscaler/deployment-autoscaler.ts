import { Inject, Injectable } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { withTenant, type Pool, type PoolClient } from '@weir/db';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, WEIR_CONFIG, type ControlPlaneOptions } from '../control-plane-options';
import { BundleReader } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun } from '../deployments/deployment';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { DeploymentsService } from '../deployments/deployments.service';
import { PG_POOL } from '../infrastructure/tokens';
import { staleAfterMs } from '../metrics/metrics-ingestor';
import { MetricsStore } from '../metrics/metrics-store';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { ScalingDecisionEvents } from '../partitioner/scaling-decision-events';
import { newDecisionId, type DecidingMode, type ScalingDecision } from '../partitioner/scaling-decision';
import { ScalingDecisionsRepository } from '../partitioner/scaling-decisions.repository';
import { FleetRepository } from '../placement/fleet.repository';
import { runParallelism } from '../placement/subtask-plan';
import { ProblemException } from '../problems/problem.exception';
import { Reconciler } from '../reconciler/reconciler.service';
import { autoscalerInputsOf, describeScaling, plannedOfScaling, uniformParallelism, verdictOf, type AutoscalerInputs } from './autoscaler-decision-record';
import { autoscalerEligibility, lastChangeAtMs } from './autoscaler-eligibility';
import { autoscalerFigures, latestLatency, sloPressure, type OperatorFigures } from './autoscaler-inputs';
import { AutoscalerRepository } from './autoscaler.repository';
import { partitionerHotKey } from './partitioner-hot-key';
import { proposeScaling, type PartitionerHotKey, type Proposal } from './scaling-proposal';
import { coolDownLeftMs, isRepeat, stabilize, type AutoscalerState } from './stabilization';
import { policyViewOf } from '../scaling/scaling-policy';
import { ScalingPolicyRepository } from '../scaling/scaling-policy.repository';

/** A decision repeating the latest one (kind, parallelism, reason code) is recorded at most once in this long, or the cool-down if longer. */
export const REPEAT_AFTER_MS = 300_000;

/** What one look at a deployment did. */
export interface AutoscalerLook {
  /** Why nothing was judged (not claimed, not eligible, cooling down, figures missing); null when it was. */
  readonly skipped: string | null;
  /** What the figures asked for this look (null when skipped). */
  readonly proposal: Proposal | null;
  /** Why nothing was recorded although something was proposed (stabilizing, a repeat); null otherwise. */
  readonly waiting: string | null;
  readonly decision: ScalingDecision | null;
  /** In mode auto: the rescale was asked for (the deployment's pending parallelism is set, mode live). */
  readonly rescaleRequested: boolean;
}

const skipped = (why: string): AutoscalerLook => ({ skipped: why, proposal: null, waiting: null, decision: null, rescaleRequested: false });

/**
 * One look of the autoscaler at one deployment: the subtasks' latest snapshots (read before the transaction: Redis
 * is never waited on under the row lock) → per keyed operator DS2's true rate and its need at the sources' target
 * rate, the SLO's latency, the fleet's free slots and the partitioner's hot keys → a proposal (scaling-proposal.ts) →
 * the stabilization window and the cool-down → a decision recorded (not a repeat), in mode auto asked for as PATCH
 * {parallelism, rescaleMode: live} asks (DeploymentsService.requestLiveRescale). All in one transaction holding the
 * deployment's row, so of several control-plane instances one looks per interval and a look never races the
 * reconciler's step or a tenant's change; published and the reconciler kicked after commit.
 */
@Injectable()
export class DeploymentAutoscaler {
  private readonly installation: string;
  private readonly staleAfterMs: number;
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly metrics: MetricsStore,
    private readonly repository: AutoscalerRepository,
    private readonly decisions: ScalingDecisionsRepository,
    private readonly deployments: DeploymentsRepository,
    private readonly deploymentsService: DeploymentsService,
    private readonly moves: KeyGroupMovesRepository,
    private readonly bundles: BundleReader,
    private readonly fleet: FleetRepository,
    private readonly reconciler: Reconciler,
    private readonly events: ScalingDecisionEvents,
    private readonly policies: ScalingPolicyRepository,
  ) {
    this.installation = config.WEIR_QUEUE_PREFIX;
    this.staleAfterMs = staleAfterMs(options);
    this.logger = logger.child({ component: 'autoscaler' });
  }

  async look(tenantId: string, deploymentId: string, nowMs = Date.now()): Promise<AutoscalerLook> {
    const [snapshots] = await this.metrics.latestSnapshots([{ tenantId, jobId: deploymentId }], nowMs, this.staleAfterMs);
    const look = await withTenant(this.pool, tenantId, (client) => this.decide(client, deploymentId, snapshots, nowMs));
    if (look.decision) await this.events.publish(look.decision);
    if (look.rescaleRequested) this.reconciler.kick();
    return look;
  }

  private async decide(client: PoolClient, deploymentId: string, snapshots: readonly SubtaskMetricsSnapshot[], nowMs: number): Promise<AutoscalerLook> {
    const claimed = await this.repository.claim(client, this.installation, deploymentId);
    if (!claimed) return skipped('not claimed: another instance holds it, or it is not due');
    const { deployment, state } = claimed;
    const bundle = await this.bundles.byId(client, deployment.bundleId);
    if (!bundle) throw new Error(`bundle ${deployment.bundleId} of deployment ${deploymentId} is missing (bundles in use cannot be deleted)`);
    // The policy as it stands at this look (a tenant's change lands between two looks: the row lock), without its mode.
    const { mode: _mode, ...policy } = policyViewOf(deployment, bundle.maxParallelism, await this.policies.find(client, deploymentId)).policy.autoscaler;
    const schedule = (next: AutoscalerState) => this.repository.scheduleNext(client, deploymentId, policy.intervalMs, next);

    const latestRun = (await this.deployments.runs(client, deploymentId, 1))[0] ?? null;
    const eligibility = autoscalerEligibility(deployment, latestRun, await this.moves.pending(client, deploymentId));
    // A change in flight or a cool-down breaks the need: the figures after it describe another job.
    if (!eligibility.ok) return this.skip(schedule, { need: null, backlog: state.backlog }, eligibility.why);
    const run = eligibility.run;
    const coolDown = coolDownLeftMs(lastChangeAtMs(deployment, run), nowMs, policy.cooldownMs);
    if (coolDown > 0) return this.skip(schedule, { need: null, backlog: null }, `cool-down: ${Math.ceil(coolDown / 1000)} s left after the last rescale or restart`);

    const processes = run.processes.length;
    const widths = runParallelism(run.subtasks);
    const figures = autoscalerFigures(snapshots, widths, processes, state.backlog, nowMs, policy);
    if (!figures.ok) return this.skip(schedule, state, figures.why);
    const backlog = figures.source.backlog === null ? null : { atMs: nowMs, records: figures.source.backlog };
    const slo = sloPressure(await this.repository.slosOf(client, deploymentId), latestLatency(snapshots), policy.sloFraction);
    const fleet = await this.fleet.freeSlots(client);
    const hotKeys = await this.hotKeys(client, deploymentId, figures.operators, nowMs);
    const proposal = proposeScaling({ processes, operators: figures.operators, policy, slo, hotKeyOf: (id) => hotKeys.get(id) ?? null, fleetFreeSlots: fleet.free });
    if (proposal.kind === 'none') {
      await schedule({ need: null, backlog });
      return { skipped: null, proposal, waiting: null, decision: null, rescaleRequested: false };
    }

    // A hold is an unmet need up: it is stabilized as one, so a moment's hot subtask records nothing.
    const direction = proposal.kind === 'scale' ? proposal.direction : 'up';
    const stabilized = stabilize(state.need, { direction, parallelism: proposal.kind === 'scale' ? proposal.parallelism : proposal.wanted }, nowMs, policy);
    const wait = (why: string) => schedule({ need: stabilized.need, backlog }).then((): AutoscalerLook => ({ skipped: null, proposal, waiting: why, decision: null, rescaleRequested: false }));
    if (stabilized.due === null) return wait(`stabilizing: the need ${direction} held ${Math.round(stabilized.heldMs / 1000)} s of ${Math.round(stabilized.windowMs / 1000)} s`);

    const acted = proposal.kind === 'scale' ? { ...proposal, parallelism: stabilizedParallelism(proposal, stabilized.due, processes) } : proposal;
    const verdict = verdictOf(acted, processes);
    const latest = await this.decisions.latestOf(client, deploymentId, 'autoscaler');
    const latestCode = latest ? ((latest.inputs as Partial<AutoscalerInputs>).code ?? null) : null;
    const repeat = latest && { kind: latest.kind, toParallelism: latest.toParallelism, code: latestCode, decidedAtMs: latest.decidedAt.getTime() };
    if (isRepeat(repeat, verdict, nowMs, Math.max(REPEAT_AFTER_MS, policy.cooldownMs))) return wait(`repeats decision ${latest!.decisionId}`);

    const mode = deployment.autoscalerMode as DecidingMode;
    const driver = figures.operators.find((o) => o.rates.operatorId === acted.operatorId) ?? figures.operators[0];
    let reason = describeScaling(acted, verdict, processes, mode, stabilized);
    let rescaleRequested = false;
    if (mode === 'auto' && verdict.kind !== 'HOLD') {
      const asked = await this.requestRescale(client, deployment, run, widths, processes, verdict.toParallelism);
      if (asked === null) rescaleRequested = true;
      else reason = `${reason}; not made: ${asked}`.slice(0, 4000);
    }
    const planned = plannedOfScaling(driver, verdict.toParallelism);
    const inputs: AutoscalerInputs = {
      ...autoscalerInputsOf({ processes, operators: figures.operators, source: figures.source, slo, policy, stabilized, fleet, proposal: acted, fromMs: figures.fromMs, toMs: figures.toMs }),
      code: verdict.code,
    };
    const decision = await this.decisions.insert(client, {
      tenantId: deployment.tenantId,
      deploymentId,
      decisionId: newDecisionId(nowMs),
      runNo: run.runNo,
      source: 'autoscaler',
      operatorId: driver.rates.operatorId,
      mode,
      kind: verdict.kind,
      reason,
      keyGroups: [],
      imbalanceBefore: planned.imbalance,
      imbalanceAfter: planned.imbalance,
      unfinished: false,
      detection: planned.detection,
      decision: planned.decision,
      inputs,
      moveId: null,
      fromParallelism: processes,
      toParallelism: verdict.toParallelism,
    });
    // Asked for: the rescale is the next change; its cool-down starts when it settles.
    await schedule({ need: rescaleRequested ? null : stabilized.need, backlog });
    return { skipped: null, proposal, waiting: null, decision, rescaleRequested };
  }

  private async skip(schedule: (next: AutoscalerState) => Promise<void>, next: AutoscalerState, why: string): Promise<AutoscalerLook> {
    await schedule(next);
    return skipped(why);
  }

  /** Each operator's hot key the partitioner declined to split as not mergeable, from its latest decision on it. */
  private async hotKeys(client: PoolClient, deploymentId: string, operators: readonly OperatorFigures[], nowMs: number): Promise<Map<string, PartitionerHotKey>> {
    const out = new Map<string, PartitionerHotKey>();
    for (const { rates } of operators) {
      const latest = await this.decisions.latest(client, deploymentId, rates.operatorId);
      const key = latest && partitionerHotKey(latest.decision, nowMs);
      if (key) out.set(rates.operatorId, key);
    }
    return out;
  }

  /**
   * The live rescale PATCH {parallelism, rescaleMode: live} would ask for, in this transaction; a string says why it
   * could not be asked for (the tenant's quota, say), for the decision's reason.
   */
  private async requestRescale(client: PoolClient, deployment: Deployment, run: DeploymentRun, widths: Readonly<Record<string, number>>, processes: number, n: number): Promise<string | null> {
    try {
      await this.deploymentsService.requestLiveRescale(client, deployment, uniformParallelism(deployment.parallelism, widths, processes, n));
      return null;
    } catch (err) {
      if (!(err instanceof ProblemException)) throw err;
      this.logger.info({ tenantId: deployment.tenantId, deploymentId: deployment.id, runNo: run.runNo, why: err.message }, 'the autoscaler could not ask for the rescale');
      return err.message;
    }
  }
}

/**
 * The parallelism to act on: the window's most cautious (the smallest up, the largest down), kept on the proposal's
 * side of the current width and within what the proposal allows now (bounds, free slots).
 */
function stabilizedParallelism(proposal: Extract<Proposal, { kind: 'scale' }>, due: number, processes: number): number {
  return proposal.direction === 'up' ? Math.min(proposal.parallelism, Math.max(due, processes + 1)) : Math.max(proposal.parallelism, Math.min(due, processes - 1));
}
