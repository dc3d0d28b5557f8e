import { Injectable } from '@nestjs/common';
import { toDatabaseError, type PoolClient, type SqlClient } from '@weir/db';
import type { Deployment } from '../deployments/deployment';
import { DEPLOYMENT_COLUMNS, toDeployment, type DeploymentRow } from '../deployments/deployment-rows';
import type { MoveState } from '../moves/key-group-move';
import type { DecisionSource, Detection, PlannedDecision, ScalingDecision } from './scaling-decision';
import { newestPerDeploymentSql } from '../pagination/newest-per-deployment';

const COLUMNS = `tenant_id, deployment_id, decision_id, run_no, source, operator_id, mode, kind, reason, key_groups, imbalance_before,
  imbalance_after, unfinished, detection, decision, inputs, move_id, from_parallelism, to_parallelism, decided_at`;

interface DecisionRow {
  tenant_id: string;
  deployment_id: string;
  decision_id: string;
  run_no: number;
  source: ScalingDecision['source'];
  operator_id: string;
  mode: ScalingDecision['mode'];
  kind: ScalingDecision['kind'];
  reason: string;
  key_groups: number[];
  imbalance_before: number;
  imbalance_after: number;
  unfinished: boolean;
  detection: Detection;
  decision: PlannedDecision;
  inputs: ScalingDecision['inputs'];
  move_id: string | null;
  from_parallelism: number | null;
  to_parallelism: number | null;
  decided_at: Date;
}

/** An operator's latest decision with the state of the move that carried it out (null when none did). */
export interface LatestDecision {
  readonly decision: ScalingDecision;
  readonly moveState: MoveState | null;
}

/**
 * The SQL of the partitioner's controller (which deployments are due, claiming one, its decisions) and of the
 * decisions API. Every method but `due` runs on a tenant-bound client (RLS binds it to one tenant); `due` crosses
 * tenants through the SECURITY DEFINER function that returns ids alone, as the reconciler's scan does.
 */
@Injectable()
export class ScalingDecisionsRepository {
  /** Deployments of this installation the partitioner may look at now, across tenants, the longest waiting first. */
  async due(client: Pick<PoolClient, 'query'>, installation: string, max: number): Promise<{ tenantId: string; deploymentId: string }[]> {
    const rows = await q<{ tenant_id: string; deployment_id: string }>(client, 'list deployments due for the partitioner', 'SELECT tenant_id, deployment_id FROM weir_partitioner_due($1, $2)', [
      max,
      installation,
    ]);
    return rows.map((r) => ({ tenantId: r.tenant_id, deploymentId: r.deployment_id }));
  }

  /**
   * Claims the deployment for this transaction, as the reconciler does: the row lock keeps a second instance (and the
   * reconciler's step, and a tenant's move request) out until commit, and SKIP LOCKED makes the loser move on. Null
   * when another holds it, it is no longer due, the partitioner was turned off, or its tenant is being deleted.
   */
  async claim(client: PoolClient, installation: string, deploymentId: string): Promise<Deployment | null> {
    const rows = await q<DeploymentRow>(
      client,
      'claim deployment for the partitioner',
      `SELECT ${DEPLOYMENT_COLUMNS} FROM deployments
       WHERE id = $1 AND installation = $2 AND partitioner_mode <> 'off'
         AND (partitioner_next_at IS NULL OR partitioner_next_at <= now())
         AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = deployments.tenant_id AND t.deleting_since IS NOT NULL)
       FOR UPDATE SKIP LOCKED`,
      [deploymentId, installation],
    );
    return rows.length ? toDeployment(rows[0]) : null;
  }

  /** The next look, one interval from now (database time, as every instance reads it). */
  async scheduleNext(client: PoolClient, deploymentId: string, afterMs: number): Promise<void> {
    await q(client, 'schedule the partitioner', `UPDATE deployments SET partitioner_next_at = now() + $2 * interval '1 millisecond' WHERE id = $1`, [deploymentId, afterMs]);
  }

  /** The partitioner's latest decision on one operator (the autoscaler's rows beside it are not its history). */
  async latest(client: PoolClient, deploymentId: string, operatorId: string): Promise<LatestDecision | null> {
    const rows = await q<DecisionRow & { move_state: MoveState | null }>(
      client,
      'read the latest decision',
      `SELECT ${prefixed('s')}, m.state AS move_state FROM deployment_scaling_decisions s
       LEFT JOIN deployment_key_group_moves m ON m.deployment_id = s.deployment_id AND m.move_id = s.move_id
       WHERE s.deployment_id = $1 AND s.operator_id = $2 AND s.source = 'partitioner' ORDER BY s.decision_id DESC LIMIT 1`,
      [deploymentId, operatorId],
    );
    return rows.length ? { decision: toDecision(rows[0]), moveState: rows[0].move_state } : null;
  }

  /**
   * The key groups the partitioner's splits and fold-backs changed (mode auto) since `sinceMs`, with when: they cool
   * down as moved key groups do, so a key is not split and folded back over and over.
   */
  async splitChangesSince(client: PoolClient, deploymentId: string, operatorId: string, sinceMs: number): Promise<{ keyGroup: number; atMs: number }[]> {
    const rows = await q<{ key_group: number; at_ms: string }>(
      client,
      'read the recent split changes',
      `SELECT unnest(key_groups) AS key_group, (extract(epoch FROM decided_at) * 1000)::bigint AS at_ms FROM deployment_scaling_decisions
       WHERE deployment_id = $1 AND operator_id = $2 AND source = 'partitioner' AND mode = 'auto'
         AND decision ? 'keySplits' AND decided_at >= to_timestamp($3 / 1000.0)`,
      [deploymentId, operatorId, sinceMs],
    );
    return rows.map((r) => ({ keyGroup: r.key_group, atMs: Number(r.at_ms) }));
  }

  /** One controller's latest decision on the deployment, any operator. */
  async latestOf(client: PoolClient, deploymentId: string, source: DecisionSource): Promise<ScalingDecision | null> {
    const rows = await q<DecisionRow>(
      client,
      'read the latest decision of a controller',
      `SELECT ${COLUMNS} FROM deployment_scaling_decisions WHERE deployment_id = $1 AND source = $2 ORDER BY decision_id DESC LIMIT 1`,
      [deploymentId, source],
    );
    return rows.length ? toDecision(rows[0]) : null;
  }

  async insert(client: PoolClient, d: Omit<ScalingDecision, 'decidedAt'>): Promise<ScalingDecision> {
    const rows = await q<DecisionRow>(
      client,
      'insert scaling decision',
      `INSERT INTO deployment_scaling_decisions (tenant_id, deployment_id, decision_id, run_no, source, operator_id, mode, kind, reason,
         key_groups, imbalance_before, imbalance_after, unfinished, detection, decision, inputs, move_id, from_parallelism, to_parallelism)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING ${COLUMNS}`,
      [
        d.tenantId,
        d.deploymentId,
        d.decisionId,
        d.runNo,
        d.source,
        d.operatorId,
        d.mode,
        d.kind,
        d.reason,
        d.keyGroups,
        d.imbalanceBefore,
        d.imbalanceAfter,
        d.unfinished,
        JSON.stringify(d.detection),
        JSON.stringify(d.decision),
        JSON.stringify(d.inputs),
        d.moveId,
        d.fromParallelism,
        d.toParallelism,
      ],
    );
    return toDecision(rows[0]);
  }

  async find(client: SqlClient, deploymentId: string, decisionId: string): Promise<ScalingDecision | null> {
    const rows = await q<DecisionRow>(client, 'find scaling decision', `SELECT ${COLUMNS} FROM deployment_scaling_decisions WHERE deployment_id = $1 AND decision_id = $2`, [
      deploymentId,
      decisionId,
    ]);
    return rows.length ? toDecision(rows[0]) : null;
  }

  /** Newest first (ids are time-ordered), after the cursor's decision id. */
  async list(client: SqlClient, deploymentId: string, limit: number, beforeId: string | undefined): Promise<ScalingDecision[]> {
    const rows = await q<DecisionRow>(
      client,
      'list scaling decisions',
      `SELECT ${COLUMNS} FROM deployment_scaling_decisions
       WHERE deployment_id = $1 AND ($2::text IS NULL OR decision_id < $2) ORDER BY decision_id DESC LIMIT $3`,
      [deploymentId, beforeId ?? null, limit],
    );
    return rows.map(toDecision);
  }

  /** `list` of each deployment at once: the first `limitEach` of each, newest first, ordered by deployment. */
  async listByDeployment(client: SqlClient, deploymentIds: readonly string[], limitEach: number, beforeId: string | undefined): Promise<ScalingDecision[]> {
    const rows = await q<DecisionRow>(
      client,
      'list scaling decisions',
      newestPerDeploymentSql('deployment_scaling_decisions', COLUMNS, 'decision_id'),
      [deploymentIds, beforeId ?? null, limitEach],
    );
    return rows.map(toDecision);
  }
}

function prefixed(alias: string): string {
  return COLUMNS.split(',').map((c) => `${alias}.${c.trim()}`).join(', ');
}

function toDecision(r: DecisionRow): ScalingDecision {
  return {
    tenantId: r.tenant_id,
    deploymentId: r.deployment_id,
    decisionId: r.decision_id,
    runNo: r.run_no,
    source: r.source,
    operatorId: r.operator_id,
    mode: r.mode,
    kind: r.kind,
    reason: r.reason,
    keyGroups: r.key_groups,
    imbalanceBefore: r.imbalance_before,
    imbalanceAfter: r.imbalance_after,
    unfinished: r.unfinished,
    detection: r.detection,
    decision: r.decision,
    inputs: r.inputs,
    moveId: r.move_id,
    fromParallelism: r.from_parallelism,
    toParallelism: r.to_parallelism,
    decidedAt: r.decided_at,
  };
}

async function q<R extends object = object>(client: SqlClient, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
