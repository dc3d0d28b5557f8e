import { Injectable } from '@nestjs/common';
import { toDatabaseError, type PoolClient, type SqlClient } from '@weir/db';
import type { Deployment } from '../deployments/deployment';
import { DEPLOYMENT_COLUMNS, toDeployment, type DeploymentRow } from '../deployments/deployment-rows';
import type { SloPercentile } from '../slos/slo';
import type { SloOfDeployment } from './autoscaler-inputs';
import { EMPTY_AUTOSCALER_STATE, type AutoscalerState } from './stabilization';

/**
 * The autoscaler controller's SQL: which deployments are due, claiming one with its carried state, scheduling the next
 * look, and the deployment's SLOs. Every method but `due` runs on a tenant-bound client (RLS binds it to one tenant);
 * `due` crosses tenants through the SECURITY DEFINER function that returns ids alone, as the partitioner's scan does.
 */
@Injectable()
export class AutoscalerRepository {
  async due(client: Pick<PoolClient, 'query'>, installation: string, max: number): Promise<{ tenantId: string; deploymentId: string }[]> {
    const rows = await q<{ tenant_id: string; deployment_id: string }>(client, 'list deployments due for the autoscaler', 'SELECT tenant_id, deployment_id FROM weir_autoscaler_due($1, $2)', [
      max,
      installation,
    ]);
    return rows.map((r) => ({ tenantId: r.tenant_id, deploymentId: r.deployment_id }));
  }

  /**
   * Claims the deployment for this transaction, as the partitioner does (FOR UPDATE SKIP LOCKED: a second instance,
   * the reconciler's step and a tenant's PATCH wait until commit, or move on). Null when another holds it, it is no
   * longer due, the autoscaler was turned off, or its tenant is being deleted.
   */
  async claim(client: PoolClient, installation: string, deploymentId: string): Promise<{ deployment: Deployment; state: AutoscalerState } | null> {
    const rows = await q<DeploymentRow & { autoscaler_state: AutoscalerState | null }>(
      client,
      'claim deployment for the autoscaler',
      `SELECT ${DEPLOYMENT_COLUMNS}, autoscaler_state FROM deployments
       WHERE id = $1 AND installation = $2 AND autoscaler_mode <> 'off'
         AND (autoscaler_next_at IS NULL OR autoscaler_next_at <= now())
         AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = deployments.tenant_id AND t.deleting_since IS NOT NULL)
       FOR UPDATE SKIP LOCKED`,
      [deploymentId, installation],
    );
    if (!rows.length) return null;
    return { deployment: toDeployment(rows[0]), state: rows[0].autoscaler_state ?? EMPTY_AUTOSCALER_STATE };
  }

  /** The next look one interval from now (database time, as every instance reads it), with the state carried to it. */
  async scheduleNext(client: PoolClient, deploymentId: string, afterMs: number, state: AutoscalerState): Promise<void> {
    await q(client, 'schedule the autoscaler', `UPDATE deployments SET autoscaler_next_at = now() + $2 * interval '1 millisecond', autoscaler_state = $3 WHERE id = $1`, [
      deploymentId,
      afterMs,
      JSON.stringify(state),
    ]);
  }

  async slosOf(client: SqlClient, deploymentId: string): Promise<SloOfDeployment[]> {
    const rows = await q<{ id: string; name: string; percentile: SloPercentile; threshold_ms: number; state: string; burn_rate: number | null }>(
      client,
      "read the deployment's SLOs",
      'SELECT id, name, percentile, threshold_ms, state, burn_rate FROM slos WHERE deployment_id = $1 ORDER BY id',
      [deploymentId],
    );
    return rows.map((r) => ({ id: r.id, name: r.name, percentile: r.percentile, thresholdMs: r.threshold_ms, state: r.state, burnRate: r.burn_rate }));
  }
}

async function q<R extends object = object>(client: SqlClient, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
