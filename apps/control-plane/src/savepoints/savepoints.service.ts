import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { BlobStore } from '@weir/blob';
import { CheckpointStore, checkRestore, type CompletedCheckpoint, type RestoreCheck } from '@weir/checkpoint';
import { BundleReader } from '../deployments/bundle-reader';
import type { Deployment } from '../deployments/deployment';
import { DeploymentConflictProblem } from '../deployments/deployment.problems';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { DeploymentsService } from '../deployments/deployments.service';
import { BLOB_STORE } from '../infrastructure/tokens';
import { InvalidRequestProblem, NotFoundProblem } from '../problems/problem.exception';
import { TenantDb } from '../tenancy/tenant-db';
import { SavepointCommands } from './savepoint-commands';
import type { RestoreSavepointBody } from './savepoint-input';
import { DeploymentNotRunningProblem, SavepointIncompatibleProblem } from './savepoint.problems';

export type SavepointState = 'PENDING' | 'COMPLETED' | 'FAILED';

export interface SavepointStatus {
  readonly savepointId: string;
  readonly state: SavepointState;
  readonly failureReason: string | null;
  /** Set once COMPLETED. */
  readonly savepoint: SavepointSummary | null;
}

export interface SavepointSummary {
  readonly savepointId: string;
  readonly checkpointId: number;
  readonly createdAt: string;
  readonly location: string;
  readonly maxParallelism: number;
  readonly operators: readonly string[];
  readonly stateBytes: number;
}

export interface RestoreCheckResult extends RestoreCheck {
  readonly bundleId: string;
  /** One sentence per problem, naming the operator: what a restore would say. */
  readonly explanation: string;
}

/**
 * Savepoints of a deployment: the manifest on S3 is the record (written last, so it exists only when complete);
 * a trigger id is the savepoint id, so retrying a trigger is harmless at every step (BullMQ job id, worker key,
 * the job host's "exists already" check). A pending trigger is the worker command not yet finished.
 */
@Injectable()
export class SavepointsService {
  private readonly store: CheckpointStore;

  constructor(
    private readonly db: TenantDb,
    private readonly deployments: DeploymentsRepository,
    private readonly deploymentsService: DeploymentsService,
    private readonly bundles: BundleReader,
    private readonly commands: SavepointCommands,
    @Inject(BLOB_STORE) blob: BlobStore,
  ) {
    this.store = new CheckpointStore(blob);
  }

  /**
   * Takes a savepoint; with `stop`, stop-with-savepoint: the worker stops the job only once the savepoint is on S3,
   * and the reconciler makes the desired state SUSPENDED only then (it reads the pending stop recorded here). A
   * savepoint that fails is FAILED on this resource, and the deployment keeps running.
   */
  async trigger(tenantId: string, deploymentId: string, request: { savepointId?: string; stop?: boolean }): Promise<SavepointStatus> {
    const savepointId = request.savepointId ?? `sp-${randomUUID()}`;
    const { deployment, run } = await this.db.run(tenantId, async (client) => {
      const d = await this.mustFind(client, deploymentId);
      const latest = (await this.deployments.runs(client, deploymentId, 1))[0];
      return { deployment: d, run: latest && !latest.endedAt && latest.runningAt ? latest : null };
    });
    const existing = await this.store.savepoint(scopeOf(deployment), savepointId);
    if (existing) return completed(existing);
    if (!run || deployment.status !== 'RUNNING' || deployment.desiredState !== 'RUNNING') {
      throw new DeploymentNotRunningProblem(`deployment ${deploymentId} is ${deployment.status}: a savepoint needs the job running`);
    }
    if (request.stop) {
      // Recorded before the command goes out: the reconciler must know the job's exit is this stop, not its end.
      const stop = { savepointId, runNo: run.runNo, requestedAt: new Date().toISOString() };
      const recorded = await this.db.run(tenantId, (client) => this.deployments.setPendingStop(client, deploymentId, stop));
      if (!recorded) {
        throw new DeploymentConflictProblem(`deployment ${deploymentId} has a stop-with-savepoint in flight (${deployment.pendingStop?.savepointId}); wait for it`);
      }
    }
    try {
      // To process 0's worker (run.workerId): it takes the run's savepoints; with stop, every process exits after it.
      await this.commands.send(run.workerId, tenantId, deploymentId, savepointId, request.stop ?? false);
    } catch (err) {
      if (request.stop) await this.db.run(tenantId, (client) => this.deployments.clearPendingStop(client, deploymentId, savepointId));
      throw err;
    }
    return { savepointId, state: 'PENDING', failureReason: null, savepoint: null };
  }

  async status(tenantId: string, deploymentId: string, savepointId: string): Promise<SavepointStatus> {
    const { deployment, workerId } = await this.db.run(tenantId, async (client) => {
      const d = await this.mustFind(client, deploymentId);
      const run = (await this.deployments.runs(client, deploymentId, 1))[0];
      return { deployment: d, workerId: run?.workerId ?? null };
    });
    const existing = await this.store.savepoint(scopeOf(deployment), savepointId);
    if (existing) return completed(existing);
    const outcome = workerId ? await this.commands.outcome(workerId, deploymentId, savepointId) : { state: 'UNKNOWN' as const };
    if (outcome.state === 'UNKNOWN') throw new NotFoundProblem('Savepoint', savepointId);
    return { savepointId, state: outcome.state, failureReason: outcome.state === 'FAILED' ? outcome.reason : null, savepoint: null };
  }

  async list(tenantId: string, deploymentId: string): Promise<SavepointSummary[]> {
    const deployment = await this.db.readWith(tenantId, (client) => this.mustFind(client, deploymentId));
    const scope = scopeOf(deployment);
    const out: SavepointSummary[] = [];
    for (const ref of await this.store.list(scope)) {
      if (ref.kind === 'savepoint') out.push(summary(await this.store.read(ref)));
    }
    return out;
  }

  /** Deletes the savepoint's manifest; its files go at the next retention round unless something else needs them. */
  async dispose(tenantId: string, deploymentId: string, savepointId: string): Promise<void> {
    const deployment = await this.db.readWith(tenantId, (client) => this.mustFind(client, deploymentId));
    if (!(await this.store.dispose(scopeOf(deployment), savepointId))) throw new NotFoundProblem('Savepoint', savepointId);
  }

  /** "Can bundle X restore savepoint S?", from the savepoint's manifest and the bundle's manifest alone. */
  async check(tenantId: string, deploymentId: string, savepointId: string, bundleId: string): Promise<RestoreCheckResult> {
    const { deployment, bundle } = await this.db.run(tenantId, async (client) => ({
      deployment: await this.mustFind(client, deploymentId),
      bundle: await this.bundles.byId(client, bundleId),
    }));
    if (!bundle) throw new InvalidRequestProblem([{ in: 'body', name: 'bundleId', reason: `no bundle ${JSON.stringify(bundleId)}` }]);
    const savepoint = await this.store.savepoint(scopeOf(deployment), savepointId);
    if (!savepoint) throw new NotFoundProblem('Savepoint', savepointId);
    const result = restoreCheckOf(savepoint, bundle.operatorIds, bundle.maxParallelism);
    return { ...result, bundleId, explanation: explain(result, savepointId) };
  }

  /**
   * Starts the deployment from a savepoint, optionally in another bundle version and at another parallelism,
   * whatever its status: a running deployment stops and starts again from it (UPGRADING), a resting one resumes
   * from it. The dry run decides first: unreadable state is refused, dropped state too unless allowed. The bundle,
   * parallelism, restore and desired state RUNNING are one change (DeploymentsService.restore: validation, quotas).
   */
  async restore(tenantId: string, deploymentId: string, savepointId: string, body: RestoreSavepointBody): Promise<Deployment> {
    const { deployment, bundle } = await this.db.run(tenantId, async (client) => {
      const d = await this.mustFind(client, deploymentId);
      return { deployment: d, bundle: await this.bundles.byId(client, body.bundleId ?? d.pendingUpgrade?.bundleId ?? d.bundleId) };
    });
    if (!bundle) throw new InvalidRequestProblem([{ in: 'body', name: 'bundleId', reason: `no bundle ${JSON.stringify(body.bundleId)}` }]);
    if (deployment.desiredState === 'CANCELLED') {
      throw new DeploymentConflictProblem(`deployment ${deploymentId} is cancelled; create a new deployment and restore the savepoint there`);
    }
    const savepoint = await this.store.savepoint(scopeOf(deployment), savepointId);
    if (!savepoint) throw new NotFoundProblem('Savepoint', savepointId);
    const check = restoreCheckOf(savepoint, bundle.operatorIds, bundle.maxParallelism);
    if (check.unreadable.length > 0 || (check.dropped.length > 0 && !body.allowNonRestoredState)) {
      const hint = check.unreadable.length === 0 ? ' (allowNonRestoredState: true drops it)' : '';
      throw new SavepointIncompatibleProblem(`${explain(check, savepointId)}${hint}`);
    }
    return this.deploymentsService.restore(tenantId, deploymentId, {
      bundleId: body.bundleId,
      parallelism: body.parallelism,
      snapshot: {
        snapshotId: savepointId,
        location: savepoint.key,
        allowNonRestoredState: body.allowNonRestoredState ?? false,
        reason: `savepoint ${savepointId} (checkpoint ${savepoint.manifest.checkpointId})`,
      },
    });
  }

  private async mustFind(client: Parameters<DeploymentsRepository['find']>[0], id: string): Promise<Deployment> {
    const d = await this.deployments.find(client, id);
    if (!d) throw new NotFoundProblem('Deployment', id);
    return d;
  }
}

/**
 * checkRestore over the bundle's operators. Exactly-once sink epochs are not operator state a bundle must take:
 * they were committed when the savepoint completed (or are committed by the restore), whatever the bundle.
 */
export function restoreCheckOf(savepoint: CompletedCheckpoint, operatorIds: readonly string[], maxParallelism: number): RestoreCheck {
  const sinkOnly = savepoint.manifest.operators
    .filter((o) => o.subtasks.every((s) => s.files.length === 0 && s.metadata.every((m) => m.name === 'sink-epoch')))
    .map((o) => o.operatorId);
  return checkRestore(savepoint.manifest, { operatorIds: [...new Set([...operatorIds, ...sinkOnly])], maxParallelism });
}

export function explain(check: RestoreCheck, savepointId: string): string {
  if (check.ok) return `savepoint ${savepointId} restores completely`;
  const parts = [
    ...check.dropped.map((id) => `operator "${id}" has state in the savepoint but not in the bundle: it would be dropped`),
    ...check.unreadable.map((u) => `operator "${u.operatorId}" cannot read its state: ${u.reason}`),
  ];
  return `savepoint ${savepointId}: ${parts.join('; ')}`;
}

function scopeOf(d: Deployment): { tenantId: string; jobId: string } {
  return { tenantId: d.tenantId, jobId: d.id };
}

function completed(c: CompletedCheckpoint): SavepointStatus {
  return { savepointId: c.manifest.savepointId!, state: 'COMPLETED', failureReason: null, savepoint: summary(c) };
}

function summary(c: CompletedCheckpoint): SavepointSummary {
  return {
    savepointId: c.manifest.savepointId!,
    checkpointId: c.manifest.checkpointId,
    createdAt: c.manifest.createdAt,
    location: c.key,
    maxParallelism: c.manifest.maxParallelism,
    operators: c.manifest.operators.map((o) => o.operatorId),
    stateBytes: c.manifest.stats.stateBytes,
  };
}
