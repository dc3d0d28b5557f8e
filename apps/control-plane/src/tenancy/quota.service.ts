import { Injectable } from '@nestjs/common';
import type { PoolClient, SqlClient } from '@weir/db';
import { NotFoundProblem } from '../problems/problem.exception';
import { TenantBeingDeletedProblem } from './tenant-deletion.problems';
import { checkDeployQuota, type DeploymentUsage, type DeployRequest, type TenantQuotas } from './quotas';

interface QuotaRow {
  deleting_since: Date | null;
  max_deployments: number;
  max_total_parallelism: number;
  max_bundle_bytes: string;
}

/**
 * Per-tenant quotas. Every method takes the client of a TenantDb.run transaction, so reads and the caller's writes
 * see the same snapshot and RLS binds them to the tenant; quotasOf alone may also run as a read of its own
 * (TenantDb.readWith).
 */
@Injectable()
export class QuotaService {
  /** The tenant's quotas. */
  async quotasOf(client: SqlClient, tenantId: string): Promise<TenantQuotas> {
    return this.read(client, tenantId, '');
  }

  /**
   * Locks the tenant's row for the rest of the transaction and returns its quotas: concurrent deploys of one tenant
   * queue here, so two of them cannot both pass a check that only one fits. FOR NO KEY UPDATE, not FOR UPDATE: it
   * excludes itself just the same, but not the KEY SHARE lock a foreign key to the tenant takes, so writers of the
   * tenant's other rows (the reconciler's runs and transitions, uploads) never wait for a quota check.
   */
  async lockQuotas(client: PoolClient, tenantId: string): Promise<TenantQuotas> {
    return this.read(client, tenantId, 'FOR NO KEY UPDATE');
  }

  /**
   * Locks the tenant, reads its usage with `readUsage` (the deployments' own query, run after the lock), and throws
   * QuotaExceededProblem when the deploy would exceed maxDeployments or maxTotalParallelism.
   */
  async assertCanDeploy(
    client: PoolClient,
    tenantId: string,
    request: DeployRequest,
    readUsage: (client: PoolClient) => Promise<DeploymentUsage>,
  ): Promise<void> {
    const quotas = await this.lockQuotas(client, tenantId);
    checkDeployQuota(quotas, await readUsage(client), request);
  }

  private async read(client: SqlClient, tenantId: string, lock: '' | 'FOR NO KEY UPDATE'): Promise<TenantQuotas> {
    const { rows } = await client.query<QuotaRow>(
      `SELECT deleting_since, max_deployments, max_total_parallelism, max_bundle_bytes FROM tenants WHERE id = $1 ${lock}`,
      [tenantId],
    );
    if (!rows.length) throw new NotFoundProblem('tenant', tenantId);
    // Every deploy, rescale, upgrade and bundle upload reads its quotas here first, so this one check refuses them
    // all for a tenant being deleted (its keys are revoked too; this catches a request authenticated just before).
    if (rows[0].deleting_since) throw new TenantBeingDeletedProblem(tenantId);
    return {
      maxDeployments: rows[0].max_deployments,
      maxTotalParallelism: rows[0].max_total_parallelism,
      maxBundleBytes: Number(rows[0].max_bundle_bytes),
    };
  }
}
