import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import type { DeploymentStatus } from '../deployments/deployment';
import { TENANT_TABLES } from './tenant-deletion';
import type { LiveDeployment } from './tenant-deletion.problems';

/**
 * SQL of deleting a tenant. Runs inside TenantDb.run(<that tenant>): RLS binds every statement to it, and each
 * names the tenant as well.
 */
@Injectable()
export class TenantDeletionRepository {
  /**
   * Locks the tenant's row and returns its mark (null: not marked yet), or undefined when there is no such tenant.
   * `FOR NO KEY UPDATE` when marking: the lock quota checks take, so a concurrent deploy queues behind the mark and
   * then sees it. `FOR UPDATE` before deleting: it also excludes the KEY SHARE lock a foreign key to the tenant
   * takes, so no row of the tenant can be inserted until the deletion commits (and none can after: the row is gone).
   * `FOR SHARE` for a key's creation: it and the mark wait for each other.
   */
  async lockTenant(client: PoolClient, tenantId: string, lock: 'FOR SHARE' | 'FOR NO KEY UPDATE' | 'FOR UPDATE'): Promise<Date | null | undefined> {
    const { rows } = await client.query<{ deleting_since: Date | null }>(`SELECT deleting_since FROM tenants WHERE id = $1 ${lock}`, [tenantId]);
    return rows.length ? rows[0].deleting_since : undefined;
  }

  /**
   * Locks the tenant's deployments, in id order. Taken before the tenant's row: a rescale or upgrade locks its
   * deployment, then the tenant (the quota check), and taking them in the other order here could deadlock with it.
   */
  async lockDeployments(client: PoolClient, tenantId: string): Promise<void> {
    await client.query('SELECT id FROM deployments WHERE tenant_id = $1 ORDER BY id FOR UPDATE', [tenantId]);
  }

  /** Every deployment with its status, desired state and whether its latest run is still open. */
  async deployments(client: PoolClient, tenantId: string): Promise<(LiveDeployment & { status: DeploymentStatus })[]> {
    const { rows } = await client.query<{ id: string; status: DeploymentStatus; desired_state: string; open_run: boolean }>(
      `SELECT d.id, d.status, d.desired_state,
              EXISTS (SELECT 1 FROM deployment_runs r WHERE r.tenant_id = d.tenant_id AND r.deployment_id = d.id AND r.ended_at IS NULL) AS open_run
       FROM deployments d WHERE d.tenant_id = $1 ORDER BY d.id`,
      [tenantId],
    );
    return rows.map((r) => ({ id: r.id, status: r.status, desiredState: r.desired_state, openRun: r.open_run }));
  }

  /** Sets the mark unless it is set (a resumed deletion keeps the time it began). */
  async mark(client: PoolClient, tenantId: string): Promise<Date> {
    const { rows } = await client.query<{ deleting_since: Date }>(
      'UPDATE tenants SET deleting_since = COALESCE(deleting_since, now()) WHERE id = $1 RETURNING deleting_since',
      [tenantId],
    );
    return rows[0].deleting_since;
  }

  /** Revokes every key not yet revoked; returns the ids of all the tenant's keys, to broadcast (again, on a resume). */
  async revokeAllKeys(client: PoolClient, tenantId: string): Promise<string[]> {
    const { rows } = await client.query<{ id: string }>(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE tenant_id = $1 RETURNING id',
      [tenantId],
    );
    return rows.map((r) => r.id);
  }

  /** Ids of every deployment the tenant ever had (cancelled ones keep their rows): their jobs' internal topics. */
  async deploymentIds(client: PoolClient, tenantId: string): Promise<string[]> {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM deployments WHERE tenant_id = $1', [tenantId]);
    return rows.map((r) => r.id);
  }

  /** Every row of the tenant, children first, then the tenant itself. */
  async deleteAll(client: PoolClient, tenantId: string): Promise<void> {
    for (const table of TENANT_TABLES) {
      await client.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
    await client.query('DELETE FROM tenants WHERE id = $1', [tenantId]);
  }
}
