import type { PoolClient } from '@weir/db';
import type { BundleReader } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun, Parallelism, RunOutcome } from '../deployments/deployment';
import type { CommandGateway } from '../placement/command-gateway';
import type { FleetRepository } from '../placement/fleet.repository';
import { chooseWorker } from '../placement/placement';
import { planSubtasks, slotsFor } from '../placement/subtask-plan';
import type { ReconcileRepository } from './reconcile.repository';
import type { PlaceResult, ReconcileActions } from './state-machine';

export interface ActionDeps {
  readonly repository: ReconcileRepository;
  readonly bundles: BundleReader;
  readonly fleet: FleetRepository;
  readonly gateway: CommandGateway;
}

/**
 * The reconciler's side effects for one deployment, inside the transaction that holds its row. Commands are sent
 * before the transaction commits: should the commit fail, the next attempt resends the same command with the same
 * idempotency key to the same worker (the run row, with its worker, is what the placement decision committed).
 */
export class TransactionActions implements ReconcileActions {
  constructor(
    private readonly client: PoolClient,
    private readonly deployment: Deployment,
    private readonly deps: ActionDeps,
  ) {}

  async placeRun(options: { bundleId: string; parallelism: Parallelism; reason: string; restoreFrom?: DeploymentRun['restoreFrom'] }): Promise<PlaceResult> {
    const bundle = await this.deps.bundles.byId(this.client, options.bundleId);
    if (!bundle) return { placed: false, reason: `bundle ${options.bundleId} is gone` };
    const slots = slotsFor(bundle, options.parallelism);
    const workers = await this.deps.fleet.lockAndReadCapacity(this.client);
    const choice = chooseWorker(workers, slots);
    if (!choice) {
      return { placed: false, reason: `waiting for a live worker with ${slots} free slot${slots === 1 ? '' : 's'} (${workers.length} alive)` };
    }
    const run = await this.deps.repository.insertRun(this.client, this.deployment, {
      workerId: choice.workerId,
      bundleId: bundle.id,
      subtasks: planSubtasks(bundle, options.parallelism),
      slots,
      reason: options.reason,
      // A restore the tenant asked for (a savepoint) wins over the status's default (the latest checkpoint).
      restoreFrom: (await this.deps.repository.takeRequestedRestore(this.client, this.deployment.id)) ?? options.restoreFrom ?? null,
    });
    return { placed: true, run };
  }

  async dispatchRun(run: DeploymentRun): Promise<void> {
    if (run.dispatchedAt) return;
    const bundle = await this.deps.bundles.byId(this.client, run.bundleId);
    if (!bundle) throw new Error(`bundle ${run.bundleId} of run ${run.runNo} is gone`);
    await this.deps.gateway.sendRun(this.deployment, run, bundle);
    await this.deps.repository.stampRun(this.client, run, 'dispatched_at');
  }

  async stopRun(run: DeploymentRun, reason: string): Promise<void> {
    if (run.stopSentAt || run.endedAt) return;
    await this.deps.gateway.sendStop(this.deployment, run, reason);
    await this.deps.repository.stampRun(this.client, run, 'stop_sent_at');
  }

  async markRunning(run: DeploymentRun): Promise<void> {
    if (!run.runningAt) await this.deps.repository.stampRun(this.client, run, 'running_at');
  }

  endRun(run: DeploymentRun, outcome: RunOutcome, reason: string): Promise<void> {
    return this.deps.repository.endRun(this.client, run, outcome, reason);
  }

  runFailure(run: DeploymentRun): Promise<string | null> {
    return this.deps.gateway.runFailure(this.deployment.id, run);
  }

  adoptPendingUpgrade(): Promise<void> {
    return this.deps.repository.adoptPendingUpgrade(this.client, this.deployment.id);
  }

  adoptPendingParallelism(): Promise<void> {
    return this.deps.repository.adoptPendingParallelism(this.client, this.deployment.id);
  }
}
