import { Injectable } from '@nestjs/common';
import { toDatabaseError, type PoolClient, type SqlClient } from '@weir/db';
import type { DeploymentUsage } from '../tenancy/quotas';
import type {
  Deployment,
  DeploymentConfig,
  DeploymentRun,
  DeploymentStatus,
  DeploymentTransition,
  DesiredState,
  Parallelism,
  AutoscalerMode,
  PartitionerMode,
  PendingStop,
  PendingUpgrade,
  RescaleMode,
} from './deployment';
import {
  DEPLOYMENT_COLUMNS,
  RUN_COLUMNS,
  TRANSITION_COLUMNS,
  toDeployment,
  toRun,
  toTransition,
  type DeploymentRow,
  type RunRow,
  type TransitionRow,
} from './deployment-rows';

export interface NewDeployment {
  readonly tenantId: string;
  /** The accepting control plane's WEIR_QUEUE_PREFIX: only control planes on the same queues reconcile it. */
  readonly installation: string;
  readonly id: string;
  readonly name: string;
  readonly bundleId: string;
  readonly parallelism: Parallelism;
  readonly slots: number;
  readonly config: DeploymentConfig;
  readonly desiredState: DesiredState;
  readonly partitionerMode: PartitionerMode;
  readonly autoscalerMode: AutoscalerMode;
  readonly reason: string;
}

/** A snapshot the tenant asked the next run to start from. */
export interface RequestedRestore {
  readonly snapshotId: string;
  readonly location: string;
  readonly allowNonRestoredState: boolean;
  readonly reason: string;
}

/**
 * The API's SQL over deployments; every method runs on a TenantDb client (a transaction's, or readWith's for a read
 * of one statement), so RLS binds it to the caller's tenant.
 */
@Injectable()
export class DeploymentsRepository {
  /** Inserts the deployment and its first transition (→ CREATED). Null when the name is taken. */
  async insert(client: PoolClient, d: NewDeployment): Promise<Deployment | null> {
    const rows = await q<DeploymentRow>(
      client,
      'insert deployment',
      `INSERT INTO deployments (tenant_id, id, name, bundle_id, parallelism, slots, config, desired_state, status_reason, installation, partitioner_mode, autoscaler_mode)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (tenant_id, name) WHERE desired_state <> 'CANCELLED' DO NOTHING
       RETURNING ${DEPLOYMENT_COLUMNS}`,
      [d.tenantId, d.id, d.name, d.bundleId, JSON.stringify(d.parallelism), d.slots, JSON.stringify(d.config), d.desiredState, d.reason, d.installation, d.partitionerMode, d.autoscalerMode],
    );
    if (!rows.length) return null;
    await q(client, 'record creation', `INSERT INTO deployment_transitions (tenant_id, deployment_id, from_status, to_status, reason) VALUES ($1, $2, NULL, 'CREATED', $3)`, [
      d.tenantId,
      d.id,
      d.reason,
    ]);
    return toDeployment(rows[0]);
  }

  async find(client: SqlClient, id: string, { lock = false } = {}): Promise<Deployment | null> {
    const rows = await q<DeploymentRow>(client, 'find deployment', `SELECT ${DEPLOYMENT_COLUMNS} FROM deployments WHERE id = $1 ${lock ? 'FOR UPDATE' : ''}`, [id]);
    return rows.length ? toDeployment(rows[0]) : null;
  }

  /** The deployments among `ids` (another tenant's are invisible), in no particular order. */
  async findMany(client: SqlClient, ids: readonly string[]): Promise<Deployment[]> {
    const rows = await q<DeploymentRow>(client, 'find deployments', `SELECT ${DEPLOYMENT_COLUMNS} FROM deployments WHERE id = ANY($1::text[])`, [ids]);
    return rows.map(toDeployment);
  }

  /** Which of `ids` are deployments of the tenant. */
  async existing(client: SqlClient, ids: readonly string[]): Promise<Set<string>> {
    const rows = await q<{ id: string }>(client, 'find deployments', 'SELECT id FROM deployments WHERE id = ANY($1::text[])', [ids]);
    return new Set(rows.map((r) => r.id));
  }

  async list(client: SqlClient, limit: number, afterId: string | undefined, status: DeploymentStatus | undefined): Promise<Deployment[]> {
    const rows = await q<DeploymentRow>(
      client,
      'list deployments',
      `SELECT ${DEPLOYMENT_COLUMNS} FROM deployments
       WHERE ($1::text IS NULL OR id > $1) AND ($2::text IS NULL OR status = $2)
       ORDER BY id LIMIT $3`,
      [afterId ?? null, status ?? null, limit],
    );
    return rows.map(toDeployment);
  }

  /** What counts against the tenant's quotas: deployments that are not cancelled or finished. */
  async usage(client: PoolClient): Promise<DeploymentUsage> {
    const rows = await q<{ n: number; slots: number }>(
      client,
      'read deployment usage',
      `SELECT count(*)::int AS n, coalesce(sum(slots), 0)::int AS slots FROM deployments
       WHERE desired_state <> 'CANCELLED' AND status NOT IN ('CANCELLED', 'FINISHED')`,
      [],
    );
    return { deployments: rows[0].n, totalParallelism: rows[0].slots };
  }

  /**
   * Applies a change the tenant asked for, and makes the deployment due for the reconciler at once. updated_at is
   * the time of this statement (after the row lock), so a change made after the reconciler settled the deployment
   * in FAILED or FINISHED reads as later than that transition: it asks for a restart.
   */
  async update(
    client: PoolClient,
    id: string,
    change: { desiredState?: DesiredState; pendingParallelism?: Parallelism; rescaleMode?: RescaleMode; pendingUpgrade?: PendingUpgrade; slots?: number },
  ): Promise<Deployment> {
    const rows = await q<DeploymentRow>(
      client,
      'update deployment',
      `UPDATE deployments SET
         desired_state = coalesce($2, desired_state),
         pending_parallelism = coalesce($3::jsonb, pending_parallelism),
         -- The mode goes with the parallelism it was asked with (a later change replaces both).
         pending_rescale_mode = CASE WHEN $3::jsonb IS NULL THEN pending_rescale_mode ELSE coalesce($6, 'live') END,
         pending_upgrade = coalesce($4::jsonb, pending_upgrade),
         slots = coalesce($5, slots),
         updated_at = clock_timestamp(), next_reconcile_at = now()
       WHERE id = $1 RETURNING ${DEPLOYMENT_COLUMNS}`,
      [
        id,
        change.desiredState ?? null,
        change.pendingParallelism ? JSON.stringify(change.pendingParallelism) : null,
        change.pendingUpgrade ? JSON.stringify(change.pendingUpgrade) : null,
        change.slots ?? null,
        change.rescaleMode ?? null,
      ],
    );
    return toDeployment(rows[0]);
  }

  /**
   * Sets what the partitioner may do. Neither updated_at nor the reconciler's schedule changes: this is no request
   * to the lifecycle (a FAILED deployment is not restarted by it); the partitioner looks again at once.
   */
  async setPartitionerMode(client: PoolClient, id: string, mode: PartitionerMode): Promise<void> {
    await q(client, 'set partitioner mode', 'UPDATE deployments SET partitioner_mode = $2, partitioner_next_at = NULL WHERE id = $1', [id, mode]);
  }

  /** Sets what the autoscaler may do; as the partitioner's mode, no request to the lifecycle. It looks again at once. */
  async setAutoscalerMode(client: PoolClient, id: string, mode: AutoscalerMode): Promise<void> {
    await q(client, 'set autoscaler mode', 'UPDATE deployments SET autoscaler_mode = $2, autoscaler_next_at = NULL WHERE id = $1', [id, mode]);
  }

  /** Records the restore for the next run placed; replaces whatever was pending (a kept state, an older request). */
  async requestRestore(client: PoolClient, tenantId: string, id: string, r: RequestedRestore): Promise<void> {
    await q(
      client,
      'request restore',
      `INSERT INTO deployment_restores (tenant_id, deployment_id, snapshot_id, location, allow_non_restored_state, origin, reason)
       VALUES ($1, $2, $3, $4, $5, 'requested', $6)
       ON CONFLICT (deployment_id) DO UPDATE SET snapshot_id = $3, location = $4, allow_non_restored_state = $5,
         origin = 'requested', reason = $6, requested_at = now()`,
      [tenantId, id, r.snapshotId, r.location, r.allowNonRestoredState, r.reason.slice(0, 1000)],
    );
  }

  /** Drops what the next run would have restored (a resume without state). */
  async clearRestore(client: PoolClient, id: string): Promise<void> {
    await q(client, 'clear restore', 'DELETE FROM deployment_restores WHERE deployment_id = $1', [id]);
  }

  /** Records a stop-with-savepoint in flight; false when another one is. */
  async setPendingStop(client: PoolClient, id: string, stop: PendingStop): Promise<boolean> {
    const rows = await q(
      client,
      'record stop-with-savepoint',
      `UPDATE deployments SET pending_stop = $2, updated_at = clock_timestamp(), next_reconcile_at = now()
       WHERE id = $1 AND (pending_stop IS NULL OR pending_stop->>'savepointId' = $2::jsonb->>'savepointId') RETURNING id`,
      [id, JSON.stringify(stop)],
    );
    return rows.length > 0;
  }

  async clearPendingStop(client: PoolClient, id: string, savepointId: string): Promise<void> {
    await q(client, 'clear stop-with-savepoint', `UPDATE deployments SET pending_stop = NULL WHERE id = $1 AND pending_stop->>'savepointId' = $2`, [id, savepointId]);
  }

  async runs(client: PoolClient, id: string, limit: number): Promise<DeploymentRun[]> {
    const rows = await q<RunRow>(client, 'list runs', `SELECT ${RUN_COLUMNS} FROM deployment_runs WHERE deployment_id = $1 ORDER BY run_no DESC LIMIT $2`, [id, limit]);
    return rows.map(toRun);
  }

  async transitions(client: PoolClient, id: string, limit: number, afterId: string | undefined): Promise<DeploymentTransition[]> {
    const rows = await q<TransitionRow>(
      client,
      'list transitions',
      `SELECT ${TRANSITION_COLUMNS} FROM deployment_transitions
       WHERE deployment_id = $1 AND ($2::bigint IS NULL OR id > $2::bigint) ORDER BY id LIMIT $3`,
      [id, afterId ?? null, limit],
    );
    return rows.map(toTransition);
  }
}

async function q<R extends object = object>(client: SqlClient, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
