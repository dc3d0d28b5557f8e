import { Injectable } from '@nestjs/common';
import type { PoolClient, SqlClient } from '@weir/db';
import type { InputPosition, Rollout, RolloutAck, RolloutKind, RolloutPhase, RuleSetVersion } from './rule-set';

interface VersionRow { deployment_id: string; version: number; document: { rules: Record<string, unknown>[] }; created_at: Date }
interface RolloutRow {
  id: string; deployment_id: string; version: number; kind: RolloutKind; phase: RolloutPhase; publish_ts: string;
  rules_topic: string; acks_topic: string; expected_rule_ids: string[]; rules_offset: string | null; message: string | null;
  created_at: Date; completed_at: Date | null;
}
const ROLLOUT_COLUMNS = `id, deployment_id, version, kind, phase, publish_ts::text, rules_topic, acks_topic, expected_rule_ids, rules_offset,
  message, created_at, completed_at`;

export interface NewRollout {
  readonly id: string;
  readonly deploymentId: string;
  readonly version: number;
  readonly kind: RolloutKind;
  readonly publishTs: number;
  readonly rulesTopic: string;
  readonly acksTopic: string;
  readonly expectedRuleIds: readonly string[];
}

/**
 * SQL of rule versions, rollouts and acks. Callers pass a client of a TenantDb transaction (or of TenantDb.readWith,
 * for a read of one statement): RLS binds each statement.
 */
@Injectable()
export class RulesRepository {
  /** Serialises version numbering and rollouts of one deployment (the lock ends with the transaction). */
  async lockDeployment(client: PoolClient, deploymentId: string): Promise<void> {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('weir.rules'), hashtext($1))`, [deploymentId]);
  }

  async insertVersion(client: PoolClient, tenantId: string, deploymentId: string, rules: readonly Record<string, unknown>[]): Promise<RuleSetVersion> {
    const { rows } = await client.query<VersionRow>(
      `INSERT INTO rule_versions (tenant_id, deployment_id, version, document, rule_count)
       SELECT $1, $2, COALESCE(MAX(version), 0) + 1, $3, $4 FROM rule_versions WHERE deployment_id = $2
       RETURNING deployment_id, version, document, created_at`,
      [tenantId, deploymentId, JSON.stringify({ rules }), rules.length],
    );
    return toVersion(rows[0]);
  }

  async findVersion(client: SqlClient, deploymentId: string, version: number): Promise<RuleSetVersion | null> {
    const { rows } = await client.query<VersionRow>(
      'SELECT deployment_id, version, document, created_at FROM rule_versions WHERE deployment_id = $1 AND version = $2',
      [deploymentId, version],
    );
    return rows[0] ? toVersion(rows[0]) : null;
  }

  /** Versions in descending order (newest first), after `beforeVersion` when paging. */
  async listVersions(client: SqlClient, deploymentId: string, limit: number, beforeVersion: number | undefined): Promise<RuleSetVersion[]> {
    const { rows } = await client.query<VersionRow>(
      `SELECT deployment_id, version, document, created_at FROM rule_versions
       WHERE deployment_id = $1 AND ($3::integer IS NULL OR version < $3) ORDER BY version DESC LIMIT $2`,
      [deploymentId, limit, beforeVersion ?? null],
    );
    return rows.map(toVersion);
  }

  /** The newest rollout of the deployment of these kinds (shadow rollouts do not change the active rules). */
  async latestRollout(client: PoolClient, deploymentId: string, kinds: readonly RolloutKind[]): Promise<Rollout | null> {
    const { rows } = await client.query<RolloutRow>(
      `SELECT ${ROLLOUT_COLUMNS} FROM rule_rollouts WHERE deployment_id = $1 AND kind = ANY($2) ORDER BY publish_ts DESC LIMIT 1`,
      [deploymentId, kinds],
    );
    return rows[0] ? toRollout(rows[0]) : null;
  }

  async maxPublishTs(client: PoolClient, deploymentId: string): Promise<number> {
    const { rows } = await client.query<{ ts: string | null }>('SELECT MAX(publish_ts)::text AS ts FROM rule_rollouts WHERE deployment_id = $1', [deploymentId]);
    return rows[0]?.ts ? Number(rows[0].ts) : 0;
  }

  async insertRollout(client: PoolClient, tenantId: string, r: NewRollout): Promise<Rollout> {
    const { rows } = await client.query<RolloutRow>(
      `INSERT INTO rule_rollouts (tenant_id, id, deployment_id, version, kind, publish_ts, rules_topic, acks_topic, expected_rule_ids, phase)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'ROLLING_OUT') RETURNING ${ROLLOUT_COLUMNS}`,
      [tenantId, r.id, r.deploymentId, r.version, r.kind, r.publishTs, r.rulesTopic, r.acksTopic, r.expectedRuleIds],
    );
    return toRollout(rows[0]);
  }

  /** Earlier rollouts of the same track still rolling out will never complete as such: a newer one replaced them. */
  async supersedeBefore(client: PoolClient, deploymentId: string, publishTs: number, kinds: readonly RolloutKind[]): Promise<void> {
    await client.query(
      `UPDATE rule_rollouts SET phase = 'SUPERSEDED', completed_at = now(), message = 'a newer rollout replaced it before every subtask acknowledged'
       WHERE deployment_id = $1 AND publish_ts < $2 AND kind = ANY($3) AND phase = 'ROLLING_OUT'`,
      [deploymentId, publishTs, kinds],
    );
  }

  async setRulesOffset(client: PoolClient, id: string, offset: string): Promise<void> {
    await client.query('UPDATE rule_rollouts SET rules_offset = $2 WHERE id = $1', [id, offset]);
  }

  async findRollout(client: PoolClient, deploymentId: string, id: string): Promise<Rollout | null> {
    const { rows } = await client.query<RolloutRow>(`SELECT ${ROLLOUT_COLUMNS} FROM rule_rollouts WHERE deployment_id = $1 AND id = $2`, [deploymentId, id]);
    return rows[0] ? toRollout(rows[0]) : null;
  }

  async rolloutsByTs(client: PoolClient, deploymentId: string, publishTs: readonly number[]): Promise<Rollout[]> {
    const { rows } = await client.query<RolloutRow>(
      `SELECT ${ROLLOUT_COLUMNS} FROM rule_rollouts WHERE deployment_id = $1 AND publish_ts = ANY($2::bigint[])`,
      [deploymentId, publishTs.map(String)],
    );
    return rows.map(toRollout);
  }

  async openRollouts(client: SqlClient, deploymentId: string): Promise<Rollout[]> {
    const { rows } = await client.query<RolloutRow>(
      `SELECT ${ROLLOUT_COLUMNS} FROM rule_rollouts WHERE deployment_id = $1 AND phase = 'ROLLING_OUT' ORDER BY publish_ts`,
      [deploymentId],
    );
    return rows.map(toRollout);
  }

  /** Records acks in one statement; a replayed ack (same rollout, subtask and rule) is ignored. */
  /**
   * Deployments of this installation with a rollout in progress, across tenants, through the SECURITY DEFINER
   * function that answers ids and acks topics alone (start-up resumes collecting their acks).
   */
  async openRolloutsOfInstallation(client: Pick<PoolClient, 'query'>, installation: string): Promise<{ tenantId: string; deploymentId: string; acksTopic: string }[]> {
    const { rows } = await client.query<{ tenant_id: string; deployment_id: string; acks_topic: string }>(
      'SELECT tenant_id, deployment_id, acks_topic FROM weir_open_rule_rollouts($1)',
      [installation],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, deploymentId: r.deployment_id, acksTopic: r.acks_topic }));
  }

  async insertAcks(client: PoolClient, tenantId: string, rolloutId: string, acks: readonly RolloutAck[]): Promise<void> {
    if (acks.length === 0) return;
    await client.query(
      `INSERT INTO rule_rollout_acks (tenant_id, rollout_id, operator_id, subtask, parallelism, rule_id, outcome, problems, acks_offset, acked_at, input_position)
       SELECT $1, $2, a.operator_id, a.subtask, a.parallelism, a.rule_id, a.outcome, a.problems, a.acks_offset, a.acked_at, a.input_position
       FROM jsonb_to_recordset($3::jsonb) AS a(operator_id text, subtask int, parallelism int, rule_id text, outcome text, problems jsonb,
         acks_offset text, acked_at timestamptz, input_position jsonb)
       ON CONFLICT DO NOTHING`,
      [tenantId, rolloutId, JSON.stringify(acks.map((a) => ({
        operator_id: a.operatorId, subtask: a.subtask, parallelism: a.parallelism, rule_id: a.ruleId, outcome: a.outcome,
        problems: a.problems, acks_offset: a.acksOffset, acked_at: a.ackedAt.toISOString(), input_position: a.inputPosition,
      })))],
    );
  }

  async acks(client: PoolClient, rolloutId: string): Promise<RolloutAck[]> {
    const { rows } = await client.query<{
      operator_id: string; subtask: number; parallelism: number; rule_id: string; outcome: RolloutAck['outcome']; problems: string[] | null;
      acks_offset: string; acked_at: Date; input_position: InputPosition | null;
    }>(
      `SELECT operator_id, subtask, parallelism, rule_id, outcome, problems, acks_offset, acked_at, input_position FROM rule_rollout_acks
       WHERE rollout_id = $1 ORDER BY operator_id, subtask, rule_id`,
      [rolloutId],
    );
    return rows.map((r) => ({
      operatorId: r.operator_id, subtask: r.subtask, parallelism: r.parallelism, ruleId: r.rule_id, outcome: r.outcome, problems: r.problems,
      acksOffset: r.acks_offset, ackedAt: r.acked_at, inputPosition: r.input_position,
    }));
  }

  /** Moves a rollout out of ROLLING_OUT; false when it already left (another instance got there first). */
  async finish(client: PoolClient, id: string, phase: Exclude<RolloutPhase, 'ROLLING_OUT'>, message: string | null): Promise<boolean> {
    const { rowCount } = await client.query(
      `UPDATE rule_rollouts SET phase = $2, message = $3, completed_at = now() WHERE id = $1 AND phase = 'ROLLING_OUT'`,
      [id, phase, message],
    );
    return (rowCount ?? 0) > 0;
  }
}

function toVersion(r: VersionRow): RuleSetVersion {
  return { deploymentId: r.deployment_id, version: r.version, rules: r.document.rules, createdAt: r.created_at };
}

function toRollout(r: RolloutRow): Rollout {
  return {
    id: r.id, deploymentId: r.deployment_id, version: r.version, kind: r.kind, phase: r.phase, publishTs: Number(r.publish_ts),
    rulesTopic: r.rules_topic, acksTopic: r.acks_topic, expectedRuleIds: r.expected_rule_ids, rulesOffset: r.rules_offset,
    message: r.message, createdAt: r.created_at, completedAt: r.completed_at,
  };
}
