import type { PoolClient } from '@weir/db';
import type { BundleReader } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun, LiveRescale, Parallelism, RunOutcome } from '../deployments/deployment';
import type { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import type { RescalesRepository } from '../rescales/rescales.repository';
import { stopCommandKey, type CommandGateway, type RunRefusal } from '../placement/command-gateway';
import type { FleetRepository } from '../placement/fleet.repository';
import { shortageReason, spreadProcesses } from '../placement/placement';
import { planRouting, type PreviousRouting } from '../placement/routing';
import { planProcesses, runParallelism } from '../placement/subtask-plan';
import { jobPrefix, LATEST_CHECKPOINT, savepointManifestKey } from '../savepoints/restore-points';
import { savepointCommandKey, type SavepointCommands } from '../savepoints/savepoint-commands';
import { LiveRescaleDriver } from './live-rescale-driver';
import type { ReconcileRepository } from './reconcile.repository';
import type { SnapshotProbe } from './snapshot-probe';
import type { LiveRescaleStep, PlaceResult, ReconcileActions } from './state-machine';

export interface ActionDeps {
  readonly repository: ReconcileRepository;
  readonly bundles: BundleReader;
  readonly fleet: FleetRepository;
  readonly gateway: CommandGateway;
  readonly savepointCommands: SavepointCommands;
  readonly snapshots: SnapshotProbe;
  readonly rescales: RescalesRepository;
  readonly moves: KeyGroupMovesRepository;
}

/**
 * The reconciler's side effects for one deployment, inside the transaction that holds its row. Commands are sent
 * before the transaction commits: should the commit fail, the next attempt resends the same command with the same
 * idempotency key to the same worker (the run row, with its worker, is what the placement decision committed).
 */
export class TransactionActions implements ReconcileActions {
  /** The deployment's live rescale, driven in this transaction; `rescale.changed` is published once it commits. */
  readonly rescale: LiveRescaleDriver;

  constructor(
    private readonly client: PoolClient,
    private readonly deployment: Deployment,
    private readonly deps: ActionDeps,
  ) {
    this.rescale = new LiveRescaleDriver(client, deployment, deps);
  }

  async placeRun(options: {
    bundleId: string;
    parallelism: Parallelism;
    reason: string;
    restoreFrom?: DeploymentRun['restoreFrom'];
    keptState?: boolean;
  }): Promise<PlaceResult> {
    const bundle = await this.deps.bundles.byId(this.client, options.bundleId);
    if (!bundle) return { placed: false, reason: `bundle ${options.bundleId} is gone` };
    // The routing moves left, kept per operator whose parallelism and key-group count are unchanged (planRouting).
    const routing = planRouting(bundle, options.parallelism, await this.previousRouting());
    const plan = planProcesses(bundle, options.parallelism, routing);
    const workers = await this.deps.fleet.lockAndReadCapacity(this.client);
    const spread = spreadProcesses(workers, plan.length);
    if (!spread.placed) return { placed: false, reason: shortageReason(spread) };
    // A restore the tenant asked for (a savepoint), or the state kept when the deployment stopped, wins over the
    // status's default (the latest checkpoint, or none); taken either way, so no later run restores it again.
    const pending = await this.deps.repository.takeRestore(this.client, this.deployment.id);
    const usable = pending && (pending.origin === 'requested' || options.keptState !== false) ? pending.restore : null;
    const run = await this.deps.repository.insertRun(this.client, this.deployment, {
      bundleId: bundle.id,
      processes: plan.map((p, i) => ({ index: p.index, workerId: spread.workerIds[i], subtasks: p.subtasks })),
      routing,
      reason: options.reason,
      restoreFrom: usable ?? options.restoreFrom ?? null,
    });
    return { placed: true, run };
  }

  /** The latest run's routing (what moves left it) and widths; null before the first run or for one without a routing. */
  private async previousRouting(): Promise<PreviousRouting | null> {
    if (!this.deployment.runNo) return null;
    const previous = await this.deps.repository.run(this.client, this.deployment.id, this.deployment.runNo);
    return previous?.routing ? { routing: previous.routing, parallelism: runParallelism(previous.subtasks) } : null;
  }

  async dispatchRun(run: DeploymentRun): Promise<void> {
    if (run.dispatchedAt) return;
    const bundle = await this.deps.bundles.byId(this.client, run.bundleId);
    if (!bundle) throw new Error(`bundle ${run.bundleId} of run ${run.runNo} is gone`);
    await this.deps.gateway.sendRun(this.deployment, run, bundle);
    await this.deps.repository.stampRun(this.client, run, 'dispatched_at');
  }

  async stopRun(run: DeploymentRun, reason: string, savepointId?: string): Promise<void> {
    if (run.stopSentAt || run.endedAt) return;
    if (savepointId) {
      const savepoint = { snapshotId: savepointId, location: savepointManifestKey(this.deployment.tenantId, this.deployment.id, savepointId) };
      await this.deps.savepointCommands.sendStop(run, this.deployment, savepoint, reason);
    } else {
      await this.deps.gateway.sendStop(this.deployment, run, reason);
    }
    await this.deps.repository.stampRun(this.client, run, 'stop_sent_at');
  }

  async markRunning(run: DeploymentRun): Promise<void> {
    if (!run.runningAt) await this.deps.repository.stampRun(this.client, run, 'running_at');
  }

  endRun(run: DeploymentRun, outcome: RunOutcome, reason: string): Promise<void> {
    return this.deps.repository.endRun(this.client, run, outcome, reason);
  }

  runFailure(run: DeploymentRun): Promise<RunRefusal | null> {
    return this.deps.gateway.runFailure(this.deployment.id, run);
  }

  adoptPendingUpgrade(): Promise<void> {
    return this.deps.repository.adoptPendingUpgrade(this.client, this.deployment.id);
  }

  adoptPendingParallelism(): Promise<void> {
    return this.deps.repository.adoptPendingParallelism(this.client, this.deployment.id);
  }

  beginRescale(run: DeploymentRun): Promise<string> {
    return this.rescale.begin(run);
  }

  stepLiveRescale(rescale: LiveRescale, run: DeploymentRun, now: Date): Promise<LiveRescaleStep> {
    return this.rescale.step(rescale, run, now);
  }

  abandonRescale(rescale: LiveRescale, reason: string): Promise<void> {
    return this.rescale.abandon(rescale, reason);
  }

  async keepState(run: DeploymentRun | null, savepointIds: readonly string[], whyNoSavepoint?: string): Promise<string> {
    const d = this.deployment;
    for (const id of savepointIds) {
      const savepoint = await this.deps.snapshots.savepoint(d.tenantId, d.id, id);
      if (!savepoint) continue;
      const when = run?.restoreFrom?.snapshotId === id ? `which run ${run.runNo} restored` : `taken as run ${run?.runNo ?? '?'} stopped`;
      const reason = `savepoint ${id} (checkpoint ${savepoint.manifest.checkpointId}, ${when})`;
      await this.deps.repository.keepRestore(this.client, d, { snapshotId: id, location: savepoint.key, reason });
      const protect = [id, d.pendingRestore?.snapshotId, run?.restoreFrom?.snapshotId].filter((p): p is string => Boolean(p));
      await this.deps.snapshots.pruneLifecycleSavepoints(d.tenantId, d.id, new Set(protect));
      return `a resume restores ${reason}`;
    }
    let why = whyNoSavepoint;
    if (!why && run && savepointIds.length > 0) {
      // Process 0 takes a stop's savepoint, so its stop command carries the savepoint's failure.
      const refused = await this.deps.snapshots.commandFailure(run.workerId, stopCommandKey(d.id, run.runNo));
      why = refused ?? `savepoint ${savepointIds.at(-1)} was not taken`;
    }
    const latest = await this.deps.snapshots.latestCheckpointId(d.tenantId, d.id);
    const which = latest === null ? 'none exists yet: it starts without state' : latest === undefined ? 'S3 did not say which' : `checkpoint ${latest} as it stopped`;
    const reason = `the job's latest usable checkpoint (${which})${why ? `; ${why}` : ''}`;
    await this.deps.repository.keepRestore(this.client, d, { snapshotId: LATEST_CHECKPOINT, location: jobPrefix(d.tenantId, d.id), reason });
    return `a resume restores ${reason}`;
  }

  async savepointTaken(savepointId: string): Promise<string | null> {
    return (await this.deps.snapshots.savepoint(this.deployment.tenantId, this.deployment.id, savepointId))?.key ?? null;
  }

  savepointRefused(run: DeploymentRun, savepointId: string): Promise<string | null> {
    return this.deps.snapshots.commandFailure(run.workerId, savepointCommandKey(this.deployment.id, savepointId));
  }

  savepointCommandMissing(run: DeploymentRun, savepointId: string): Promise<boolean> {
    return this.deps.snapshots.commandMissing(run.workerId, savepointCommandKey(this.deployment.id, savepointId));
  }

  suspendAfterStop(): Promise<void> {
    return this.deps.repository.suspendAfterStop(this.client, this.deployment.id);
  }

  clearPendingStop(savepointId: string): Promise<void> {
    return this.deps.repository.clearPendingStop(this.client, this.deployment.id, savepointId);
  }
}
