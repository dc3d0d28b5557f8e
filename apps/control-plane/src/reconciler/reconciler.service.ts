import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { withTenant, type Pool } from '@weir/db';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentStatusPublisher } from '../deployments/deployment-status.publisher';
import { PG_POOL } from '../infrastructure/tokens';
import { CommandGateway } from '../placement/command-gateway';
import { FleetRepository } from '../placement/fleet.repository';
import { KeyGroupMoveEvents } from '../moves/key-group-move-events';
import { KeyGroupMovesRepository } from '../moves/key-group-moves.repository';
import { RescaleEvents } from '../rescales/rescale-events';
import { RescalesRepository } from '../rescales/rescales.repository';
import { SavepointCommands } from '../savepoints/savepoint-commands';
import { observeJob, type ObservedWorker } from './job-observation';
import { MoveDriver } from './move-driver';
import { ReconcileRepository } from './reconcile.repository';
import { recheckAfter, timingFor, type ReconcileTiming } from './reconcile-timing';
import { SnapshotProbe } from './snapshot-probe';
import { STATE_HANDLERS } from './states';
import type { Next } from './state-machine';
import { TransactionActions } from './transaction-actions';
import { assertTransition, IllegalTransitionError } from './transitions';

/** Due deployments taken per scan; the rest wait for the next tick. */
const BATCH = 100;
/** Steps one deployment may take in a row within one scan (CREATED → STARTING → placed → dispatched, say). */
const MAX_STEPS = 6;

/**
 * Drives every deployment's observed status toward its desired state. Every control-plane instance runs it:
 * - what is due lives in Postgres (next_reconcile_at), so a restarted instance carries on where any instance left off;
 * - each deployment is handled in a transaction holding its row (FOR UPDATE SKIP LOCKED), so two instances never
 *   reconcile one deployment at once;
 * - commands carry deterministic idempotency keys (<deploymentId>-run-<runNo>), so a resend after a crash between
 *   send and commit is dropped by BullMQ and by the worker: no double dispatch.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnModuleDestroy {
  readonly timing: ReconcileTiming;
  /** This control plane's installation: its queue prefix, the only queues through which it reaches workers. */
  private readonly installation: string;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly repository: ReconcileRepository,
    private readonly bundles: BundleReader,
    private readonly fleet: FleetRepository,
    private readonly gateway: CommandGateway,
    private readonly publisher: DeploymentStatusPublisher,
    private readonly savepointCommands: SavepointCommands,
    private readonly snapshots: SnapshotProbe,
    private readonly moves: MoveDriver,
    private readonly moveEvents: KeyGroupMoveEvents,
    private readonly rescales: RescalesRepository,
    private readonly rescaleEvents: RescaleEvents,
    private readonly moveRecords: KeyGroupMovesRepository,
  ) {
    this.timing = timingFor(config.WEIR_WORKER_HEARTBEAT_MS);
    this.installation = config.WEIR_QUEUE_PREFIX;
    this.logger = logger.child({ component: 'reconciler' });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.scan(), this.timing.tickMs);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.scanning;
  }

  /** Asks for a scan now (after the API changed a deployment); coalesces with a scan already running. */
  kick(): void {
    if (this.scanning) this.again = true;
    else void this.scan();
  }

  /** One scan over due deployments; a scan still running when the next tick comes makes that tick a no-op. */
  scan(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.scanning ??= this.scanOnce()
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'reconcile scan failed'))
      .finally(() => {
        this.scanning = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.scan();
        }
      });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    const due = await this.repository.due(this.pool, this.installation, BATCH);
    for (const { tenantId, deploymentId } of due) {
      if (this.stopped) return;
      try {
        for (let step = 0; step < MAX_STEPS; step++) {
          const moved = await this.reconcile(tenantId, deploymentId);
          if (!moved) break;
        }
      } catch (err) {
        // Left due: the next scan tries again. Redis or a worker queue being away is the usual cause; an illegal
        // transition is a bug in a state handler, and stays refused on every retry (hence an error, not a warning).
        const { name, message } = err as Error;
        if (err instanceof IllegalTransitionError) this.logger.error({ tenantId, deploymentId, err: { name, message } }, 'a state handler asked for an illegal transition; refused');
        else this.logger.warn({ tenantId, deploymentId, err: { name, message } }, 'reconciling a deployment failed; will retry');
      }
    }
  }

  /** One step for one deployment; true when its status moved (so the next step may follow at once). */
  async reconcile(tenantId: string, deploymentId: string): Promise<boolean> {
    const result = await withTenant(this.pool, tenantId, async (client) => {
      const deployment = await this.repository.claim(client, tenantId, this.installation, deploymentId);
      if (!deployment) return null;
      let run = deployment.runNo ? await this.repository.run(client, deployment.id, deployment.runNo) : null;
      // The move in flight first: settled before the state handler, so a placement in this step inherits the routing
      // of a move DONE (and a move of a run written off here is FAILED by the next step, never DONE after it).
      const moved = await this.moves.drive(client, deployment, run);
      if (moved.settled?.state === 'DONE' && run) run = await this.repository.run(client, deployment.id, run.runNo);
      // Every worker of the run's processes: the run is running only when all of them say so, lost when one is gone.
      const workers = run ? await this.repository.workers(client, run.processes.map((p) => p.workerId)) : new Map<string, ObservedWorker>();
      const actions = new TransactionActions(client, deployment, {
        repository: this.repository,
        bundles: this.bundles,
        fleet: this.fleet,
        gateway: this.gateway,
        savepointCommands: this.savepointCommands,
        snapshots: this.snapshots,
        rescales: this.rescales,
        moves: this.moveRecords,
      });
      const next: Next = await STATE_HANDLERS[deployment.status]({
        deployment,
        run,
        job: observeJob(tenantId, deployment.id, run, workers),
        now: new Date(),
        startTimeoutMs: this.timing.startTimeoutMs,
        actions,
      });
      if (next.kind === 'stay') {
        if (next.note) await this.repository.note(client, deployment.id, next.note);
        const after = next.again ? 0 : next.soon ? this.timing.activeRecheckMs : recheckAfter(deployment.status, this.timing);
        // A move in flight is looked at as often as an active status, whatever the status (its outcome waits on it).
        await this.repository.schedule(client, deployment.id, moved.pending ? Math.min(after ?? Infinity, this.timing.activeRecheckMs) : after);
        return { deployment, next, at: null, moved, rescales: actions.rescale.changed };
      }
      // A transition the lifecycle has no edge for is a handler's bug: refused (the step rolls back, and is logged).
      assertTransition(deployment.status, next.to, next.reason);
      const at = await this.repository.transition(client, deployment, next.to, next.reason);
      // A transition is looked at again at once: the next status may have work to do right away.
      await this.repository.schedule(client, deployment.id, 0);
      return { deployment, next, at, moved, rescales: actions.rescale.changed };
    });
    if (!result) return false;
    if (result.moved.settled) await this.moveEvents.publish(result.moved.settled);
    for (const rescale of result.rescales) await this.rescaleEvents.publish(tenantId, deploymentId, rescale);
    if (result.next.kind === 'stay') return result.next.again === true;
    if (!result.at) return false;
    const { deployment, next } = result;
    this.logger.info({ tenantId, deploymentId, from: deployment.status, to: next.to, reason: next.reason }, 'deployment status changed');
    await this.publisher.publish(tenantId, {
      deploymentId,
      status: next.to,
      previousStatus: deployment.status,
      desiredState: deployment.desiredState,
      reason: next.reason,
      at: result.at.getTime(),
    });
    return true;
  }
}
