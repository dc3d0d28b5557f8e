import { Injectable } from '@nestjs/common';
import { toDatabaseError, type SqlClient } from '@weir/db';
import type { MoveReport } from '@weir/protocol';
import type { KeyGroupMove, KeyGroupMoveStep, MoveState } from './key-group-move';
import { newestPerDeploymentSql } from '../pagination/newest-per-deployment';

const COLUMNS = `tenant_id, deployment_id, move_id, run_no, operator_id, moves, reason, requested_by, state, report, failure,
  requested_at, started_at, finished_at`;

interface MoveRow {
  tenant_id: string;
  deployment_id: string;
  move_id: string;
  run_no: number;
  operator_id: string;
  moves: KeyGroupMoveStep[];
  reason: string;
  requested_by: string;
  state: MoveState;
  report: MoveReport | null;
  failure: string | null;
  requested_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export type MoveOutcome = { readonly state: 'DONE'; readonly report: MoveReport } | { readonly state: 'FAILED'; readonly failure: string };

/**
 * The SQL over deployment_key_group_moves, for the API (request, list, get) and the reconciler (the move in flight,
 * its dispatch and its outcome). Every method runs on a tenant-bound client (RLS binds it to the caller's tenant).
 */
@Injectable()
export class KeyGroupMovesRepository {
  /**
   * Records a PENDING move and makes its deployment due for the reconciler (which sends it). Null when another move
   * of the deployment is in flight: the partial unique index on PENDING serialises moves whoever inserts them.
   */
  async insert(client: SqlClient, m: Omit<KeyGroupMove, 'state' | 'report' | 'failure' | 'requestedAt' | 'startedAt' | 'finishedAt'>): Promise<KeyGroupMove | null> {
    const rows = await q<MoveRow>(
      client,
      'insert key-group move',
      `WITH inserted AS (
         INSERT INTO deployment_key_group_moves (tenant_id, deployment_id, move_id, run_no, operator_id, moves, reason, requested_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (deployment_id) WHERE state = 'PENDING' DO NOTHING
         RETURNING ${COLUMNS}),
       due AS (UPDATE deployments SET next_reconcile_at = now() WHERE id = $2 AND EXISTS (SELECT 1 FROM inserted) RETURNING id)
       SELECT * FROM inserted`,
      [m.tenantId, m.deploymentId, m.moveId, m.runNo, m.operatorId, JSON.stringify(m.moves), m.reason, m.requestedBy],
    );
    return rows.length ? toMove(rows[0]) : null;
  }

  async find(client: SqlClient, deploymentId: string, moveId: string): Promise<KeyGroupMove | null> {
    const rows = await q<MoveRow>(client, 'find key-group move', `SELECT ${COLUMNS} FROM deployment_key_group_moves WHERE deployment_id = $1 AND move_id = $2`, [deploymentId, moveId]);
    return rows.length ? toMove(rows[0]) : null;
  }

  /** Newest first (ids are time-ordered), after the cursor's move id. */
  async list(client: SqlClient, deploymentId: string, limit: number, beforeId: string | undefined): Promise<KeyGroupMove[]> {
    const rows = await q<MoveRow>(
      client,
      'list key-group moves',
      `SELECT ${COLUMNS} FROM deployment_key_group_moves
       WHERE deployment_id = $1 AND ($2::text IS NULL OR move_id < $2) ORDER BY move_id DESC LIMIT $3`,
      [deploymentId, beforeId ?? null, limit],
    );
    return rows.map(toMove);
  }

  /** `list` of each deployment at once: the first `limitEach` of each, newest first, ordered by deployment. */
  async listByDeployment(client: SqlClient, deploymentIds: readonly string[], limitEach: number, beforeId: string | undefined): Promise<KeyGroupMove[]> {
    const rows = await q<MoveRow>(
      client,
      'list key-group moves',
      newestPerDeploymentSql('deployment_key_group_moves', COLUMNS, 'move_id'),
      [deploymentIds, beforeId ?? null, limitEach],
    );
    return rows.map(toMove);
  }

  /** The deployment's move in flight, if any (at most one). */
  async pending(client: SqlClient, deploymentId: string): Promise<KeyGroupMove | null> {
    const rows = await q<MoveRow>(client, 'read the move in flight', `SELECT ${COLUMNS} FROM deployment_key_group_moves WHERE deployment_id = $1 AND state = 'PENDING'`, [deploymentId]);
    return rows.length ? toMove(rows[0]) : null;
  }

  /**
   * The key groups of one operator that DONE moves handed over since `sinceMs` (epoch ms), each with when its move
   * finished: the partitioner's cool-down reads them, whoever asked for the move.
   */
  async changedSince(client: SqlClient, deploymentId: string, operatorId: string, sinceMs: number): Promise<{ keyGroup: number; atMs: number }[]> {
    const rows = await q<{ moves: KeyGroupMoveStep[]; finished_at: Date }>(
      client,
      'read recent key-group moves',
      `SELECT moves, finished_at FROM deployment_key_group_moves
       WHERE deployment_id = $1 AND operator_id = $2 AND state = 'DONE' AND finished_at >= to_timestamp($3::double precision / 1000)`,
      [deploymentId, operatorId, sinceMs],
    );
    return rows.flatMap((r) => r.moves.map((m) => ({ keyGroup: m.keyGroup, atMs: r.finished_at.getTime() })));
  }

  /** The operator's latest DONE move finished since `sinceMs` (epoch ms), with its report: the partitioner's move cost. */
  async latestDone(client: SqlClient, deploymentId: string, operatorId: string, sinceMs: number): Promise<KeyGroupMove | null> {
    const rows = await q<MoveRow>(
      client,
      'read the latest key-group move made',
      `SELECT ${COLUMNS} FROM deployment_key_group_moves
       WHERE deployment_id = $1 AND operator_id = $2 AND state = 'DONE' AND finished_at >= to_timestamp($3::double precision / 1000)
       ORDER BY finished_at DESC LIMIT 1`,
      [deploymentId, operatorId, sinceMs],
    );
    return rows.length ? toMove(rows[0]) : null;
  }

  /** The command went out: the first time only. */
  async markStarted(client: SqlClient, deploymentId: string, moveId: string): Promise<void> {
    await q(client, 'start key-group move', `UPDATE deployment_key_group_moves SET started_at = now() WHERE deployment_id = $1 AND move_id = $2 AND started_at IS NULL`, [
      deploymentId,
      moveId,
    ]);
  }

  /** DONE or FAILED, once: null when the move is no longer PENDING. */
  async settle(client: SqlClient, deploymentId: string, moveId: string, outcome: MoveOutcome): Promise<KeyGroupMove | null> {
    const rows = await q<MoveRow>(
      client,
      'settle key-group move',
      `UPDATE deployment_key_group_moves SET state = $3, report = $4, failure = $5, finished_at = now()
       WHERE deployment_id = $1 AND move_id = $2 AND state = 'PENDING' RETURNING ${COLUMNS}`,
      [
        deploymentId,
        moveId,
        outcome.state,
        outcome.state === 'DONE' ? JSON.stringify(outcome.report) : null,
        outcome.state === 'FAILED' ? outcome.failure.slice(0, 2000) : null,
      ],
    );
    return rows.length ? toMove(rows[0]) : null;
  }
}

function toMove(r: MoveRow): KeyGroupMove {
  return {
    tenantId: r.tenant_id,
    deploymentId: r.deployment_id,
    moveId: r.move_id,
    runNo: r.run_no,
    operatorId: r.operator_id,
    moves: r.moves,
    reason: r.reason,
    requestedBy: r.requested_by,
    state: r.state,
    report: r.report,
    failure: r.failure,
    requestedAt: r.requested_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

async function q<R extends object = object>(client: SqlClient, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
