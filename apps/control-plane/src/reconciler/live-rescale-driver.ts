import type { PoolClient } from '@weir/db';
import type { RescaleReport } from '@weir/protocol';
import type { BundleReader } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun, LiveRescale } from '../deployments/deployment';
import type { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import type { CommandGateway } from '../placement/command-gateway';
import type { FleetRepository } from '../placement/fleet.repository';
import { shortageReason, spreadProcesses } from '../placement/placement';
import { placementTimeoutOf } from '../placement/placement-settings';
import { joinerPlans, layoutAfterRescale, liveRescaleRefusal, rescaledParallelism } from '../placement/rescale-layout';
import { routingOfRun } from '../placement/routing';
import { runParallelism, slotsFor, type PlacementBundle } from '../placement/subtask-plan';
import { newRescaleId, rescaleCommandKey } from '../rescales/live-rescale';
import type { RescaleOutcome, RescalesRepository } from '../rescales/rescales.repository';
import type { ReconcileRepository } from './reconcile.repository';
import { decideRescaleCommand } from './rescale-decision';
import { runLayout } from './run-reasons';
import type { LiveRescaleStep } from './state-machine';

export interface LiveRescaleDeps {
  readonly repository: ReconcileRepository;
  readonly rescales: RescalesRepository;
  readonly moves: KeyGroupMovesRepository;
  readonly bundles: BundleReader;
  readonly fleet: FleetRepository;
  readonly gateway: CommandGateway;
}

/**
 * A live rescale's side effects for one deployment, inside the reconciler's transaction on its row (so one instance
 * at a time drives it, and a placement never runs beside it). Each step does one thing and commits it before the
 * next: place the joiners and record them in the run's layout (PENDING → JOINING); send their run-subtasks, then
 * rescale-run to process 0's worker (JOINING → MOVING); watch that command until it answers (MOVING → DONE, with the
 * report recorded as the run's layout, the retirees stopped and the parallelism adopted; or FELL_BACK). Commands go
 * out under deterministic keys, so a step retried after a failed commit resends the same commands to the same
 * workers. Everything it needs is in Postgres and the queues: a restarted or another instance carries on.
 */
export class LiveRescaleDriver {
  /** Rescales this transaction changed, to publish once it commits. */
  readonly changed: LiveRescale[] = [];

  constructor(
    private readonly client: PoolClient,
    private readonly deployment: Deployment,
    private readonly deps: LiveRescaleDeps,
  ) {}

  /**
   * A RUNNING deployment's pending parallelism: records a live rescale where the mode and the run allow one, and
   * says in words how the change will be made (the reason of the move to RESCALING).
   */
  async begin(run: DeploymentRun): Promise<string> {
    const d = this.deployment;
    const to = d.pendingParallelism;
    if (!to) throw new Error(`deployment ${d.id} has no pending parallelism to rescale to`);
    const restart = 'restarting with the new parallelism from the latest checkpoint';
    if (d.pendingRescaleMode === 'restart') return `parallelism change requested (rescaleMode restart): ${restart}`;
    const bundle = await this.bundle(run);
    const from = run.processes.length;
    const toProcesses = slotsFor(bundle, to);
    const refusal = liveRescaleRefusal(from, toProcesses);
    if (refusal) return `parallelism change requested: not possible live, as ${refusal}; ${restart}`;
    const rescaleId = newRescaleId();
    const reason = `${from} → ${toProcesses} processes: placing ${Math.max(0, toProcesses - from)} joining processes`;
    const rescale = await this.deps.rescales.insert(this.client, {
      tenantId: d.tenantId,
      deploymentId: d.id,
      rescaleId,
      runNo: run.runNo,
      from: d.parallelism,
      to,
      fromProcesses: from,
      toProcesses,
      reason,
    });
    // Another rescale in flight cannot be (each one settles before its deployment leaves RESCALING): a restart then.
    if (!rescale) return `parallelism change requested: another live rescale is recorded in flight; ${restart}`;
    this.changed.push(rescale);
    return `parallelism change requested: live rescale ${rescaleId}, ${from} → ${toProcesses} processes (key groups move while the job runs)`;
  }

  /** One step of the rescale in flight for the open run it rescales. */
  async step(rescale: LiveRescale, run: DeploymentRun, now: Date): Promise<LiveRescaleStep> {
    switch (rescale.state) {
      case 'PENDING':
        return this.join(rescale, run, now);
      case 'JOINING':
        return this.send(rescale, run);
      default:
        return this.watch(rescale, run, now);
    }
  }

  /** Gives the rescale up (FAILED) with the reason: the run ended, the desired state changed, a process is gone. */
  async abandon(rescale: LiveRescale, reason: string): Promise<void> {
    await this.settle(rescale, { state: 'FAILED', reason });
  }

  /**
   * PENDING: the joiners' slots, all or none (placement as a new run's). None free: wait, saying what for, until the
   * deployment's placement timeout; then give the rescale up and run on as it was. Not a restart: it would stop the
   * job and then wait for the same missing slots with the job down.
   */
  private async join(rescale: LiveRescale, run: DeploymentRun, now: Date): Promise<LiveRescaleStep> {
    const move = await this.deps.moves.pending(this.client, this.deployment.id);
    if (move) return this.wait(rescale, `waiting for key-group move ${move.moveId} to settle first`);
    const bundle = await this.bundle(run);
    const joiners = joinerPlans(bundle, run, rescale.toParallelism);
    let where = 'no process joins';
    if (joiners.length > 0) {
      const spread = spreadProcesses(await this.deps.fleet.lockAndReadCapacity(this.client), joiners.length);
      if (!spread.placed) return this.shortOfSlots(rescale, bundle, shortageReason(spread), now);
      const joinedAt = now.toISOString();
      const placed = joiners.map((p, i) => ({ index: p.index, workerId: spread.workerIds[i], subtasks: p.subtasks, joinedBy: rescale.rescaleId, joinedAt }));
      await this.deps.repository.setRunProcesses(this.client, run, [...run.processes, ...placed]);
      where = `${placed.length === 1 ? 'process' : 'processes'} ${placed.map((p) => `${p.index} on worker ${p.workerId}`).join(', ')} joining`;
    }
    const advanced = await this.deps.rescales.advance(this.client, this.deployment.id, rescale.rescaleId, 'JOINING', `${where}; sending the commands`);
    if (advanced) this.changed.push(advanced);
    // Sent by the next step, once the joiners are committed in the layout (a resend then goes to the same workers).
    return { kind: 'stay', note: this.describe(rescale, where), again: true };
  }

  private async shortOfSlots(rescale: LiveRescale, bundle: PlacementBundle, shortage: string, now: Date): Promise<LiveRescaleStep> {
    const timeoutMs = placementTimeoutOf(this.deployment.config);
    const deadline = new Date(rescale.requestedAt.getTime() + timeoutMs);
    const joining = rescale.toProcesses - rescale.fromProcesses;
    if (now <= deadline) return this.wait(rescale, `${shortage} for ${joining} joining processes; given up at ${deadline.toISOString()} if still not placed`);
    const reason = `given up: no slots for its ${joining} joining processes within ${timeoutMs / 1000} s (${shortage}); the job runs on at its parallelism, and the change is dropped`;
    await this.settle(rescale, { state: 'FAILED', reason });
    await this.deps.repository.dropPendingParallelism(this.client, this.deployment.id, rescale.toParallelism, slotsFor(bundle, this.deployment.parallelism));
    return { kind: 'running', reason: `live rescale ${rescale.rescaleId} ${reason}` };
  }

  /**
   * JOINING (or a command found missing): each joiner's run-subtasks, then rescale-run to process 0's worker, under
   * their keys. A failed send throws: the step rolls back and the next one sends again, the same commands.
   */
  private async send(rescale: LiveRescale, run: DeploymentRun): Promise<LiveRescaleStep> {
    const d = this.deployment;
    const bundle = await this.bundle(run);
    const parallelism = rescaledParallelism(bundle, rescale.toParallelism);
    const joiners = run.processes.filter((p) => p.joinedBy === rescale.rescaleId);
    const shape = { count: rescale.toProcesses, parallelism, joining: runParallelism(run.subtasks), routing: routingOfRun(run, bundle) };
    for (const joiner of joiners) await this.deps.gateway.sendJoin(d, run, joiner, bundle, shape);
    await this.deps.gateway.sendRescale(run.workerId, {
      idempotencyKey: rescaleCommandKey(d.id, rescale.rescaleId),
      tenantId: d.tenantId,
      jobId: d.id,
      runNo: run.runNo,
      rescaleId: rescale.rescaleId,
      processes: rescale.toProcesses,
      parallelism,
      reason: `live rescale ${rescale.rescaleId}: ${rescale.fromProcesses} → ${rescale.toProcesses} processes`,
    });
    const what = `rescale-run sent to process 0's worker ${run.workerId}${joiners.length ? ` after the run-subtasks of ${joiners.length} joining processes` : ''}`;
    const advanced = await this.deps.rescales.advance(this.client, d.id, rescale.rescaleId, 'MOVING', what);
    if (advanced) this.changed.push(advanced);
    return { kind: 'stay', note: this.describe(rescale, what) };
  }

  /** MOVING: process 0's command, until it answers. */
  private async watch(rescale: LiveRescale, run: DeploymentRun, now: Date): Promise<LiveRescaleStep> {
    const key = rescaleCommandKey(this.deployment.id, rescale.rescaleId);
    const command = await this.deps.gateway.commandState(run.workerId, key).catch(() => null);
    const decision = decideRescaleCommand({ rescale, workerId: run.workerId, command, now });
    switch (decision.kind) {
      case 'wait': {
        if (!decision.progress) return this.wait(rescale, rescale.reason);
        const { moved, total } = decision.progress;
        return this.wait(rescale, `moving key groups: ${moved} of ${total} moved`, decision.progress);
      }
      case 'send':
        return this.send(rescale, run);
      case 'fall-back':
        await this.settle(rescale, { state: 'FELL_BACK', reason: decision.reason });
        return { kind: 'restart', reason: decision.reason };
      case 'done':
        return this.finish(rescale, run, decision.report, now);
    }
  }

  /**
   * The report: the run's layout, routing and subtasks as it left them, the parallelism adopted, and only then the
   * retirees stopped (they idle, owning nothing, until here). A report that cannot be this run's layout is a
   * fall-back: the restart restores the latest checkpoint at the new parallelism, right whatever the rescale did.
   */
  private async finish(rescale: LiveRescale, run: DeploymentRun, report: RescaleReport, now: Date): Promise<LiveRescaleStep> {
    const d = this.deployment;
    const layout = layoutAfterRescale(await this.bundle(run), run, report);
    if (typeof layout === 'string') {
      const reason = `process 0's report does not fit the run: ${layout}`;
      await this.settle(rescale, { state: 'FELL_BACK', reason });
      return { kind: 'restart', reason };
    }
    for (const retiree of layout.retirees) await this.deps.gateway.sendStopProcess(d, run, retiree, `retired by live rescale ${rescale.rescaleId}`);
    await this.deps.repository.setRunLayout(this.client, run, layout);
    await this.deps.repository.adoptParallelism(this.client, d.id, rescale.toParallelism);
    const seconds = ((now.getTime() - rescale.requestedAt.getTime()) / 1000).toFixed(1);
    const moved = `${report.moved.length} key group${report.moved.length === 1 ? '' : 's'} moved`;
    const retired = layout.retirees.length ? `, ${layout.retirees.length} retired processes stopped` : '';
    const reason = `live rescale ${rescale.fromProcesses} → ${rescale.toProcesses} processes done in ${seconds} s: ${moved}${retired}`;
    await this.settle(rescale, { state: 'DONE', reason, report });
    return { kind: 'running', reason: `${reason} (${rescale.rescaleId}); run ${run.runNo} on ${runLayout(layout)}` };
  }

  /** Stay, with the rescale's reason (and progress) recorded when it changed. */
  private async wait(rescale: LiveRescale, reason: string, progress?: { moved: number; total: number }): Promise<LiveRescaleStep> {
    const noted = await this.deps.rescales.note(this.client, this.deployment.id, rescale.rescaleId, { reason, ...progress });
    if (noted) this.changed.push(noted);
    return { kind: 'stay', note: this.describe(rescale, reason) };
  }

  private async settle(rescale: LiveRescale, outcome: RescaleOutcome): Promise<void> {
    const settled = await this.deps.rescales.settle(this.client, this.deployment.id, rescale.rescaleId, outcome);
    if (settled) this.changed.push(settled);
  }

  /** The deployment's status reason while the rescale runs: "live rescale r… (2 → 4 processes): moving key groups: 3 of 16 moved". */
  private describe(rescale: LiveRescale, what: string): string {
    return `live rescale ${rescale.rescaleId} (${rescale.fromProcesses} → ${rescale.toProcesses} processes): ${what}`;
  }

  private async bundle(run: DeploymentRun): Promise<PlacementBundle> {
    const bundle = await this.deps.bundles.byId(this.client, run.bundleId);
    if (!bundle) throw new Error(`bundle ${run.bundleId} of run ${run.runNo} is gone`);
    return bundle;
  }
}
