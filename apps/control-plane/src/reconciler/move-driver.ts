import { Inject, Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import type { MoveReport } from '@weir/protocol';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { BundleReader } from '../deployments/bundle-reader';
import type { Deployment, DeploymentRun } from '../deployments/deployment';
import { moveCommandKey, type KeyGroupMove } from '../moves/key-group-move';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { CommandGateway, type CommandState } from '../placement/command-gateway';
import { applyMoves, routedAssignments, routingOfRun } from '../placement/routing';
import { decideMove } from './move-decision';
import { ReconcileRepository } from './reconcile.repository';

/** What one look at the deployment's move in flight did. */
export interface MoveStep {
  /** A move is still in flight: the deployment is looked at again soon. */
  readonly pending: boolean;
  /** The move this step settled (DONE or FAILED), to publish once the step commits. */
  readonly settled: KeyGroupMove | null;
}

const NO_MOVE: MoveStep = { pending: false, settled: null };

/**
 * The reconciler's part of live key-group moves, run in every step's transaction before the state handler, under the
 * deployment's row lock: one instance at a time per deployment, never beside a placement (which reads the routing a
 * move DONE rewrites). It sends the move in flight to the worker of its run's process 0 under the move's one key, and
 * settles it from that command's outcome on the worker's queue (move-decision.ts says when). Everything it needs is
 * in Postgres and the queue, so a restarted or another instance carries on where one left off.
 */
@Injectable()
export class MoveDriver {
  private readonly logger: Logger;

  constructor(
    private readonly moves: KeyGroupMovesRepository,
    private readonly runs: ReconcileRepository,
    private readonly bundles: BundleReader,
    private readonly gateway: CommandGateway,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'key-group-moves' });
  }

  async drive(client: PoolClient, deployment: Deployment, latest: DeploymentRun | null): Promise<MoveStep> {
    const move = await this.moves.pending(client, deployment.id);
    if (!move) return NO_MOVE;
    const moveRun = latest?.runNo === move.runNo ? latest : await this.runs.run(client, deployment.id, move.runNo);
    const key = moveCommandKey(deployment.id, move.moveId);
    const command = moveRun ? await this.lookup(moveRun.workerId, key) : ({ kind: 'missing' } as const);
    const decision = decideMove({ move, moveRun, latestRunNo: deployment.runNo, command, now: new Date() });
    switch (decision.kind) {
      case 'wait':
        // On the queue already (sent by a step whose commit failed, say): it started then.
        if (command?.kind === 'queued' && !move.startedAt) await this.moves.markStarted(client, deployment.id, move.moveId);
        return { pending: true, settled: null };
      case 'send':
        await this.send(client, deployment, moveRun!, move, key);
        return { pending: true, settled: null };
      case 'done':
        await this.recordRouting(client, moveRun!, move, decision.report);
        return { pending: false, settled: await this.moves.settle(client, deployment.id, move.moveId, { state: 'DONE', report: decision.report }) };
      case 'failed':
        return { pending: false, settled: await this.moves.settle(client, deployment.id, move.moveId, { state: 'FAILED', failure: decision.failure }) };
    }
  }

  /** Null when Redis does not answer: the move waits for the next look. */
  private lookup(workerId: string, key: string): Promise<CommandState | null> {
    return this.gateway.commandState(workerId, key).catch((err: Error) => {
      this.logger.warn({ workerId, key, err: { name: err.name, message: err.message } }, 'could not read a move command’s state; will look again');
      return null;
    });
  }

  /** A failed send leaves the move PENDING and unsent: the next look sends it again, under the same key. */
  private async send(client: PoolClient, deployment: Deployment, run: DeploymentRun, move: KeyGroupMove, key: string): Promise<void> {
    try {
      await this.gateway.sendMove(run.workerId, {
        idempotencyKey: key,
        tenantId: deployment.tenantId,
        jobId: deployment.id,
        runNo: run.runNo,
        moveId: move.moveId,
        operatorId: move.operatorId,
        moves: move.moves.map((m) => ({ keyGroup: m.keyGroup, fromSubtask: m.fromSubtask, toSubtask: m.toSubtask })),
        reason: move.reason || `key-group move ${move.moveId} requested by ${move.requestedBy}`,
      });
    } catch (err) {
      const { name, message } = err as Error;
      this.logger.warn({ tenantId: deployment.tenantId, deploymentId: deployment.id, moveId: move.moveId, err: { name, message } }, 'sending a key-group move failed; will retry');
      return;
    }
    await this.moves.markStarted(client, deployment.id, move.moveId);
  }

  /** The run's routing with what the report says moved, and its layout along it. */
  private async recordRouting(client: PoolClient, run: DeploymentRun, move: KeyGroupMove, report: MoveReport): Promise<void> {
    const bundle = await this.bundles.byId(client, run.bundleId);
    if (!bundle) throw new Error(`bundle ${run.bundleId} of run ${run.runNo} is gone`);
    const routing = applyMoves(routingOfRun(run, bundle), move.operatorId, report.moved);
    await this.runs.setRunLayout(client, run, {
      routing,
      processes: run.processes.map((p) => ({ ...p, subtasks: routedAssignments(p.subtasks, routing) })),
      subtasks: routedAssignments(run.subtasks, routing),
    });
  }
}
