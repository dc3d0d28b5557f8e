import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import { BundleReader } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun } from '../deployments/deployment';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { toPage, type Page } from '../pagination/cursor';
import { routingOfRun } from '../placement/routing';
import { runParallelism } from '../placement/subtask-plan';
import { InvalidRequestProblem, NotFoundProblem } from '../problems/problem.exception';
import { Reconciler } from '../reconciler/reconciler.service';
import { DeploymentNotRunningProblem } from '../savepoints/savepoint.problems';
import type { Principal } from '../tenancy/principal';
import { TenantDb } from '../tenancy/tenant-db';
import { newMoveId, type KeyGroupMove } from './key-group-move';
import { KeyGroupMoveEvents } from './key-group-move-events';
import { KeyGroupMoveInFlightProblem } from './key-group-move.problems';
import { KeyGroupMovesRepository } from './key-group-moves.repository';
import { resolveMoves, type MoveKeyGroupsBody } from './move-request';
import { pagesByDeployment } from '../pagination/newest-per-deployment';

/**
 * Key-group moves as tenants ask for them: checked against the running run, recorded PENDING with each key group's
 * current owner; the reconciler sends and settles them (reconciler/move-driver.ts), each change kicks it.
 */
@Injectable()
export class KeyGroupMovesService {
  constructor(
    private readonly db: TenantDb,
    private readonly moves: KeyGroupMovesRepository,
    private readonly deployments: DeploymentsRepository,
    private readonly bundles: BundleReader,
    private readonly reconciler: Reconciler,
    private readonly events: KeyGroupMoveEvents,
  ) {}

  async request(principal: Principal, deploymentId: string, body: MoveKeyGroupsBody): Promise<KeyGroupMove> {
    const move = await this.db.run(principal.tenantId, async (client) => {
      // The row lock orders this with the reconciler's step (which skips a locked row and comes back).
      const deployment = await this.deployments.find(client, deploymentId, { lock: true });
      if (!deployment) throw new NotFoundProblem('deployment', deploymentId);
      const run = await this.runningRun(client, deployment);
      const bundle = await this.bundles.byId(client, run.bundleId);
      if (!bundle) throw new Error(`bundle ${run.bundleId} of run ${run.runNo} is missing (bundles in use cannot be deleted)`);
      const resolved = resolveMoves(body, {
        bundle: `${bundle.name}@${bundle.version}`,
        operatorIds: bundle.operatorIds,
        maxParallelism: bundle.maxParallelism,
        parallelism: runParallelism(run.subtasks),
        routing: routingOfRun(run, bundle),
      });
      if (!resolved.ok) throw new InvalidRequestProblem(resolved.errors);
      const inFlight = await this.moves.pending(client, deploymentId);
      if (inFlight) throw inFlightProblem(deploymentId, inFlight.moveId);
      const inserted = await this.moves.insert(client, {
        tenantId: principal.tenantId,
        deploymentId,
        moveId: newMoveId(),
        runNo: run.runNo,
        operatorId: body.operatorId,
        moves: resolved.moves,
        reason: body.reason ?? '',
        requestedBy: principal.keyId,
      });
      // Another request inserted its move since the check above: the unique index on PENDING kept this one out.
      if (!inserted) throw inFlightProblem(deploymentId, (await this.moves.pending(client, deploymentId))?.moveId ?? 'another');
      return inserted;
    });
    this.reconciler.kick();
    await this.events.publish(move);
    return move;
  }

  async get(tenantId: string, deploymentId: string, moveId: string): Promise<KeyGroupMove> {
    const move = await this.db.readWith(tenantId, (client) => this.moves.find(client, deploymentId, moveId));
    if (move) return move;
    // One statement per read: a second one says which of the two is missing.
    const deployment = await this.db.readWith(tenantId, (client) => this.deployments.find(client, deploymentId));
    throw deployment ? new NotFoundProblem('key-group move', moveId) : new NotFoundProblem('deployment', deploymentId);
  }

  async list(tenantId: string, deploymentId: string, limit: number, beforeId: string | undefined): Promise<Page<KeyGroupMove>> {
    return this.db.run(tenantId, async (client) => {
      if (!(await this.deployments.find(client, deploymentId))) throw new NotFoundProblem('deployment', deploymentId);
      return toPage(await this.moves.list(client, deploymentId, limit + 1, beforeId), limit, (m) => m.moveId);
    });
  }

  /** `list` of each deployment, in one transaction; a deployment the tenant does not have is absent. */
  async listByDeployment(tenantId: string, deploymentIds: readonly string[], limit: number, beforeId: string | undefined): Promise<Map<string, Page<KeyGroupMove>>> {
    return this.db.run(tenantId, async (client) => {
      const [found, moves] = await Promise.all([this.deployments.existing(client, deploymentIds), this.moves.listByDeployment(client, deploymentIds, limit + 1, beforeId)]);
      return pagesByDeployment(found, moves, limit, (m) => m.moveId);
    });
  }

  /** The open run a move applies to: the deployment RUNNING as asked, with nothing pending that restarts it. */
  private async runningRun(client: PoolClient, d: Deployment): Promise<DeploymentRun> {
    if (d.status !== 'RUNNING' || d.desiredState !== 'RUNNING') {
      const desired = d.desiredState === d.status ? '' : ` (desired ${d.desiredState})`;
      throw new DeploymentNotRunningProblem(`deployment ${d.id} is ${d.status}${desired}: key groups move only while it is RUNNING`);
    }
    const restart = d.pendingUpgrade ? 'an upgrade' : d.pendingParallelism ? 'a parallelism change' : d.pendingStop ? 'a stop-with-savepoint' : d.pendingRestore?.origin === 'requested' ? 'a restore' : null;
    if (restart) throw new DeploymentNotRunningProblem(`deployment ${d.id} is about to stop for ${restart}: move key groups once its next run is RUNNING`);
    const run = (await this.deployments.runs(client, d.id, 1))[0];
    if (!run || run.endedAt || run.runNo !== d.runNo || !run.runningAt) throw new DeploymentNotRunningProblem(`deployment ${d.id} has no running run to move key groups of`);
    return run;
  }
}

function inFlightProblem(deploymentId: string, moveId: string): KeyGroupMoveInFlightProblem {
  return new KeyGroupMoveInFlightProblem(`deployment ${deploymentId} has key-group move ${moveId} in flight; moves run one at a time: wait until it is DONE or FAILED`);
}
