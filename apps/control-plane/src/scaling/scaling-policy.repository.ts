import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { toDatabaseError, type SqlClient } from '@weir/db';
import type { ScalingPolicy, ScalingPolicyChange, StoredScalingPolicy } from './scaling-policy';
import { newestPerDeploymentSql } from '../pagination/newest-per-deployment';

/** A stored policy with its last change's time and author. */
export interface StoredPolicyRow {
  readonly stored: Partial<{ readonly partitioner: Partial<StoredScalingPolicy['partitioner']>; readonly autoscaler: Partial<StoredScalingPolicy['autoscaler']> }>;
  readonly updatedAt: Date;
  readonly updatedBy: string;
}

interface PolicyRow {
  deployment_id: string;
  partitioner: StoredScalingPolicy['partitioner'];
  autoscaler: StoredScalingPolicy['autoscaler'];
  updated_at: Date;
  updated_by: string;
}

const POLICY_COLUMNS = 'deployment_id, partitioner, autoscaler, updated_at, updated_by';
const CHANGE_COLUMNS = 'change_id, deployment_id, changed_at, changed_by, from_policy, to_policy, fields';

interface ChangeRow {
  change_id: string;
  deployment_id: string;
  changed_at: Date;
  changed_by: string;
  from_policy: ScalingPolicy;
  to_policy: ScalingPolicy;
  fields: string[];
}

/**
 * The SQL over deployment_scaling_policies and deployment_scaling_policy_changes. Every method runs on a tenant-bound
 * client (RLS binds it to one tenant); the modes are the deployment's columns (DeploymentsRepository sets them).
 */
@Injectable()
export class ScalingPolicyRepository {
  async find(client: SqlClient, deploymentId: string): Promise<StoredPolicyRow | null> {
    const rows = await q<PolicyRow>(client, 'read the scaling policy', `SELECT ${POLICY_COLUMNS} FROM deployment_scaling_policies WHERE deployment_id = $1`, [deploymentId]);
    return rows.length ? toStoredPolicy(rows[0]) : null;
  }

  /** The stored policies of the deployments among `deploymentIds`, by deployment; one without a row is absent. */
  async findByDeployment(client: SqlClient, deploymentIds: readonly string[]): Promise<Map<string, StoredPolicyRow>> {
    const rows = await q<PolicyRow>(
      client,
      'read the scaling policies',
      `SELECT ${POLICY_COLUMNS} FROM deployment_scaling_policies WHERE deployment_id = ANY($1::text[])`,
      [deploymentIds],
    );
    return new Map(rows.map((r) => [r.deployment_id, toStoredPolicy(r)]));
  }

  async upsert(client: SqlClient, tenantId: string, deploymentId: string, stored: StoredScalingPolicy, by: string): Promise<StoredPolicyRow> {
    const rows = await q<{ updated_at: Date }>(
      client,
      'store the scaling policy',
      `INSERT INTO deployment_scaling_policies (tenant_id, deployment_id, partitioner, autoscaler, updated_by) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (deployment_id) DO UPDATE SET partitioner = EXCLUDED.partitioner, autoscaler = EXCLUDED.autoscaler, updated_at = now(), updated_by = EXCLUDED.updated_by
       RETURNING updated_at`,
      [tenantId, deploymentId, JSON.stringify(stored.partitioner), JSON.stringify(stored.autoscaler), by],
    );
    return { stored, updatedAt: rows[0].updated_at, updatedBy: by };
  }

  /** Both controllers look at once: a new interval, bounds or mode take effect at the next scan, not an old interval later. */
  async makeDue(client: SqlClient, deploymentId: string): Promise<void> {
    await q(client, 'make the controllers due', 'UPDATE deployments SET partitioner_next_at = NULL, autoscaler_next_at = NULL WHERE id = $1', [deploymentId]);
  }

  async recordChange(client: SqlClient, tenantId: string, change: Omit<ScalingPolicyChange, 'changeId' | 'changedAt'>): Promise<ScalingPolicyChange> {
    const rows = await q<ChangeRow>(
      client,
      'record a scaling policy change',
      `INSERT INTO deployment_scaling_policy_changes (tenant_id, deployment_id, change_id, changed_by, from_policy, to_policy, fields)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING change_id, deployment_id, changed_at, changed_by, from_policy, to_policy, fields`,
      [tenantId, change.deploymentId, newChangeId(), change.changedBy, JSON.stringify(change.from), JSON.stringify(change.to), change.fields],
    );
    return toChange(rows[0]);
  }

  /** Newest first (ids are time-ordered), before the cursor's change id. */
  async changes(client: SqlClient, deploymentId: string, limit: number, beforeId: string | undefined): Promise<ScalingPolicyChange[]> {
    const rows = await q<ChangeRow>(
      client,
      'list scaling policy changes',
      `SELECT ${CHANGE_COLUMNS} FROM deployment_scaling_policy_changes
       WHERE deployment_id = $1 AND ($2::text IS NULL OR change_id < $2) ORDER BY change_id DESC LIMIT $3`,
      [deploymentId, beforeId ?? null, limit],
    );
    return rows.map(toChange);
  }

  /** `changes` of each deployment at once: the first `limitEach` of each, newest first, ordered by deployment. */
  async changesByDeployment(client: SqlClient, deploymentIds: readonly string[], limitEach: number, beforeId: string | undefined): Promise<ScalingPolicyChange[]> {
    const rows = await q<ChangeRow>(
      client,
      'list scaling policy changes',
      newestPerDeploymentSql('deployment_scaling_policy_changes', CHANGE_COLUMNS, 'change_id'),
      [deploymentIds, beforeId ?? null, limitEach],
    );
    return rows.map(toChange);
  }
}

/** `p` + 12 hex digits of epoch ms + 12 random, as decision and move ids. */
export function newChangeId(now = Date.now()): string {
  return `p${now.toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;
}

function toStoredPolicy(r: PolicyRow): StoredPolicyRow {
  return { stored: { partitioner: r.partitioner, autoscaler: r.autoscaler }, updatedAt: r.updated_at, updatedBy: r.updated_by };
}

function toChange(r: ChangeRow): ScalingPolicyChange {
  return { changeId: r.change_id, deploymentId: r.deployment_id, changedAt: r.changed_at, changedBy: r.changed_by, from: r.from_policy, to: r.to_policy, fields: r.fields };
}

async function q<R extends object = object>(client: SqlClient, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
