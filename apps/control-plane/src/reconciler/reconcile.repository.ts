import { Injectable } from '@nestjs/common';
import { toDatabaseError, type PoolClient } from '@weir/db';
import type { RunningSubtask } from '@weir/protocol';
import type { Deployment, DeploymentRun, DeploymentStatus, Parallelism, Routing, RunOutcome, RunProcessLayout } from '../deployments/deployment';
import { DEPLOYMENT_COLUMNS, RUN_COLUMNS, toDeployment, toRun, type DeploymentRow, type RunRow } from '../deployments/deployment-rows';
import type { WorkerStatus } from '../workers/worker';
import type { ObservedWorker } from './job-observation';

/**
 * The reconciler's SQL. Every method runs on the client of a withTenant transaction (RLS binds it); only `due`
 * crosses tenants, through the SECURITY DEFINER function that returns ids alone.
 */
@Injectable()
export class ReconcileRepository {
  /** Deployments of this installation (queue prefix) due for a look, oldest first, across tenants. */
  async due(client: Pick<PoolClient, 'query'>, installation: string, max: number): Promise<{ tenantId: string; deploymentId: string }[]> {
    const rows = await q<{ tenant_id: string; deployment_id: string }>(
      client,
      'list due deployments',
      'SELECT tenant_id, deployment_id FROM weir_due_deployments($1, $2)',
      [max, installation],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, deploymentId: r.deployment_id }));
  }

  /**
   * Claims the deployment for this transaction: the row lock is what keeps two control-plane instances from
   * reconciling one deployment at once; SKIP LOCKED makes the loser move on rather than wait. Null when another
   * instance holds it or it is no longer due.
   */
  async claim(client: PoolClient, tenantId: string, installation: string, id: string): Promise<Deployment | null> {
    // No tenant lock first: the rows written below take KEY SHARE on the tenant through their foreign keys, which the
    // API's quota lock (FOR NO KEY UPDATE) does not exclude, so a reconcile never waits for a create or patch.
    const rows = await q<DeploymentRow>(
      client,
      'claim deployment',
      `SELECT ${DEPLOYMENT_COLUMNS} FROM deployments
       WHERE id = $1 AND installation = $2 AND next_reconcile_at <= now()
         -- A tenant being deleted: its deployments are never acted on again (DELETE /v1/tenants/{id} checked none
         -- could run when it marked the tenant, under this row's lock; this keeps it so, whatever changes after).
         AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = deployments.tenant_id AND t.deleting_since IS NOT NULL)
       FOR UPDATE SKIP LOCKED`,
      [id, installation],
    );
    return rows.length ? toDeployment(rows[0]) : null;
  }

  async run(client: PoolClient, deploymentId: string, runNo: number): Promise<DeploymentRun | null> {
    const rows = await q<RunRow>(client, 'read run', `SELECT ${RUN_COLUMNS} FROM deployment_runs WHERE deployment_id = $1 AND run_no = $2`, [deploymentId, runNo]);
    return rows.length ? toRun(rows[0]) : null;
  }

  /** The workers of a run's processes as the registry last heard them, by id; an id the registry lacks is absent. */
  async workers(client: PoolClient, workerIds: readonly string[]): Promise<Map<string, ObservedWorker>> {
    const rows = await q<{ id: string; status: WorkerStatus; started_at: Date; running_subtasks: RunningSubtask[] }>(
      client,
      'read workers',
      'SELECT id, status, started_at, running_subtasks FROM workers WHERE id = ANY($1::text[])',
      [[...new Set(workerIds)]],
    );
    return new Map(rows.map((r) => [r.id, { id: r.id, status: r.status, startedAt: r.started_at, runningSubtasks: r.running_subtasks }]));
  }

  async insertRun(
    client: PoolClient,
    d: Deployment,
    run: {
      bundleId: string;
      /** The layout, in index order: process 0's worker becomes worker_id, the process count slots. */
      processes: readonly RunProcessLayout[];
      /** Per operator, the owner of each key group (the layout's key groups follow it). */
      routing: Routing;
      reason: string;
      restoreFrom?: DeploymentRun['restoreFrom'];
    },
  ): Promise<DeploymentRun> {
    const subtasks = run.processes.flatMap((p) => p.subtasks);
    const rows = await q<RunRow>(
      client,
      'insert run',
      `WITH next AS (UPDATE deployments SET run_no = run_no + 1, updated_at = now() WHERE id = $2 RETURNING run_no)
       INSERT INTO deployment_runs (tenant_id, deployment_id, run_no, worker_id, bundle_id, subtasks, slots, processes, started_reason, restore_from, routing, placed_at)
       SELECT $1, $2, next.run_no, $3, $4, $5, $6, $7, $8, $9, $10, clock_timestamp() FROM next
       RETURNING ${RUN_COLUMNS}`,
      [
        d.tenantId,
        d.id,
        run.processes[0].workerId,
        run.bundleId,
        JSON.stringify(subtasks),
        run.processes.length,
        JSON.stringify(run.processes),
        run.reason.slice(0, 1000),
        run.restoreFrom ? JSON.stringify(run.restoreFrom) : null,
        JSON.stringify(run.routing),
      ],
    );
    return toRun(rows[0]);
  }

  /**
   * A live rescale's joiners placed: the run's layout with them appended (their slots counted from now on, as
   * weir_worker_slots_in_use() reads the layouts). The run's subtasks stay what it runs until the rescale's report.
   */
  async setRunProcesses(client: PoolClient, run: DeploymentRun, processes: readonly RunProcessLayout[]): Promise<void> {
    await q(client, 'record run processes', 'UPDATE deployment_runs SET processes = $3, slots = $4 WHERE deployment_id = $1 AND run_no = $2', [
      run.deploymentId,
      run.runNo,
      JSON.stringify(processes),
      processes.length,
    ]);
  }

  /**
   * A move or a live rescale DONE: the run's routing, its layout along it (what REST and GraphQL show, what the next
   * run inherits; a rescale's without its retirees) and its subtasks; the slots follow the layout (a run recorded
   * before layouts existed keeps its own). Written under the deployment's row lock, as every write of the reconciler's.
   */
  async setRunLayout(client: PoolClient, run: DeploymentRun, change: Pick<DeploymentRun, 'routing' | 'processes' | 'subtasks'>): Promise<void> {
    await q(
      client,
      'record run layout',
      `UPDATE deployment_runs SET routing = $3, processes = $4, subtasks = $5, slots = CASE WHEN $6 > 0 THEN $6 ELSE slots END
        WHERE deployment_id = $1 AND run_no = $2`,
      [run.deploymentId, run.runNo, JSON.stringify(change.routing), JSON.stringify(change.processes), JSON.stringify(change.subtasks), change.processes.length],
    );
  }

  /**
   * The parallelism a live rescale made becomes the deployment's; the pending change is cleared only if it is that
   * one (a change asked for while the rescale ran stays pending, for the next rescale).
   */
  async adoptParallelism(client: PoolClient, id: string, parallelism: Parallelism): Promise<void> {
    await q(
      client,
      'adopt rescaled parallelism',
      `UPDATE deployments SET parallelism = $2::jsonb,
         pending_rescale_mode = CASE WHEN pending_parallelism = $2::jsonb THEN NULL ELSE pending_rescale_mode END,
         pending_parallelism = CASE WHEN pending_parallelism = $2::jsonb THEN NULL ELSE pending_parallelism END,
         updated_at = now()
       WHERE id = $1`,
      [id, JSON.stringify(parallelism)],
    );
  }

  /**
   * A live rescale given up with the job running as it was: its change is dropped (unless a newer one replaced it),
   * and the deployment's slots (its quota's count) are what it runs again.
   */
  async dropPendingParallelism(client: PoolClient, id: string, parallelism: Parallelism, slots: number): Promise<void> {
    await q(
      client,
      'drop pending parallelism',
      `UPDATE deployments SET pending_parallelism = NULL, pending_rescale_mode = NULL, slots = $3, updated_at = now()
       WHERE id = $1 AND pending_parallelism = $2::jsonb`,
      [id, JSON.stringify(parallelism), slots],
    );
  }

  /**
   * The restore pending for the next run (a savepoint the tenant requested, or the state kept when it stopped),
   * removed as it is taken; null when none.
   */
  async takeRestore(client: PoolClient, deploymentId: string): Promise<{ origin: 'requested' | 'kept'; restore: NonNullable<DeploymentRun['restoreFrom']> } | null> {
    const rows = await q<{ snapshot_id: string; location: string; allow_non_restored_state: boolean; origin: 'requested' | 'kept' }>(
      client,
      'take restore',
      'DELETE FROM deployment_restores WHERE deployment_id = $1 RETURNING snapshot_id, location, allow_non_restored_state, origin',
      [deploymentId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      origin: r.origin,
      restore: { snapshotId: r.snapshot_id, location: r.location, ...(r.allow_non_restored_state ? { allowNonRestoredState: true } : {}) },
    };
  }

  /** Keeps a stopped job's state for its next run; a restore the tenant requested stays as it is. */
  async keepRestore(client: PoolClient, d: Deployment, kept: { snapshotId: string; location: string; reason: string }): Promise<void> {
    await q(
      client,
      'keep state for the next run',
      `INSERT INTO deployment_restores (tenant_id, deployment_id, snapshot_id, location, origin, reason)
       VALUES ($1, $2, $3, $4, 'kept', $5)
       ON CONFLICT (deployment_id) DO UPDATE SET snapshot_id = $3, location = $4, reason = $5, allow_non_restored_state = false, requested_at = now()
       WHERE deployment_restores.origin = 'kept'`,
      [d.tenantId, d.id, kept.snapshotId, kept.location, kept.reason.slice(0, 1000)],
    );
  }

  /** A stop-with-savepoint completed: the tenant's intent (stop) becomes the desired state. */
  async suspendAfterStop(client: PoolClient, id: string): Promise<void> {
    await q(client, 'suspend after stop-with-savepoint', `UPDATE deployments SET desired_state = 'SUSPENDED', pending_stop = NULL WHERE id = $1 AND desired_state = 'RUNNING'`, [id]);
  }

  async clearPendingStop(client: PoolClient, id: string, savepointId: string): Promise<void> {
    await q(client, 'clear stop-with-savepoint', `UPDATE deployments SET pending_stop = NULL WHERE id = $1 AND pending_stop->>'savepointId' = $2`, [id, savepointId]);
  }

  /** Sets one timestamp of a run once (dispatched, running, stop sent); true when this call set it. */
  async stampRun(client: PoolClient, run: DeploymentRun, column: 'dispatched_at' | 'running_at' | 'stop_sent_at'): Promise<boolean> {
    const rows = await q(
      client,
      `stamp run ${column}`,
      `UPDATE deployment_runs SET ${column} = now() WHERE deployment_id = $1 AND run_no = $2 AND ${column} IS NULL RETURNING run_no`,
      [run.deploymentId, run.runNo],
    );
    return rows.length > 0;
  }

  async endRun(client: PoolClient, run: DeploymentRun, outcome: RunOutcome, reason: string): Promise<void> {
    await q(
      client,
      'end run',
      `UPDATE deployment_runs SET ended_at = now(), outcome = $3, end_reason = $4
       WHERE deployment_id = $1 AND run_no = $2 AND ended_at IS NULL`,
      [run.deploymentId, run.runNo, outcome, reason.slice(0, 1000)],
    );
  }

  async adoptPendingUpgrade(client: PoolClient, id: string): Promise<void> {
    await q(client, 'adopt upgrade', `UPDATE deployments SET bundle_id = pending_upgrade->>'bundleId', pending_upgrade = NULL, updated_at = now()
      WHERE id = $1 AND pending_upgrade IS NOT NULL`, [id]);
  }

  async adoptPendingParallelism(client: PoolClient, id: string): Promise<void> {
    await q(client, 'adopt parallelism', `UPDATE deployments SET parallelism = pending_parallelism, pending_parallelism = NULL, pending_rescale_mode = NULL, updated_at = now()
      WHERE id = $1 AND pending_parallelism IS NOT NULL`, [id]);
  }

  /**
   * Moves the observed status and records the transition with its reason. Times are clock_timestamp(), not the
   * transaction's start: this statement runs after the row was claimed, hence after the previous step committed,
   * so status_changed_at, transition times and run placed_at times are ordered per deployment even across
   * instances (driveToRunning tells the old run from the new one by them).
   */
  async transition(client: PoolClient, d: Deployment, to: DeploymentStatus, reason: string): Promise<Date> {
    const rows = await q<{ at: Date; run_no: number }>(
      client,
      'transition deployment',
      `WITH t AS (SELECT clock_timestamp() AS at),
       moved AS (
         UPDATE deployments SET status = $2, status_reason = $3, status_changed_at = (SELECT at FROM t), updated_at = now(),
           -- A stop-with-savepoint concerns the run it was sent to: gone once the deployment leaves it.
           pending_stop = CASE WHEN $2 IN ('RUNNING', 'STOPPING') THEN pending_stop END
         WHERE id = $1 RETURNING tenant_id, id, run_no)
       INSERT INTO deployment_transitions (tenant_id, deployment_id, from_status, to_status, reason, run_no, at)
       SELECT tenant_id, id, $4, $2, $3, NULLIF(run_no, 0), (SELECT at FROM t) FROM moved
       RETURNING at, run_no`,
      [d.id, to, reason.slice(0, 1000), d.status],
    );
    return rows[0].at;
  }

  async note(client: PoolClient, id: string, reason: string): Promise<void> {
    await q(client, 'note deployment', 'UPDATE deployments SET status_reason = $2 WHERE id = $1 AND status_reason IS DISTINCT FROM $2', [id, reason.slice(0, 1000)]);
  }

  /** When to look again; null: only when the API changes the deployment. */
  async schedule(client: PoolClient, id: string, afterMs: number | null): Promise<void> {
    await q(
      client,
      'schedule deployment',
      `UPDATE deployments SET next_reconcile_at = CASE WHEN $2::int IS NULL THEN NULL ELSE now() + make_interval(secs => $2::int / 1000.0) END
       WHERE id = $1`,
      [id, afterMs],
    );
  }
}

async function q<R extends object = object>(client: Pick<PoolClient, 'query'>, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
