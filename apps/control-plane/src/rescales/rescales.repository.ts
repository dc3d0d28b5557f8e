import { Injectable } from '@nestjs/common';
import { toDatabaseError, type SqlClient } from '@weir/db';
import type { RescaleReport } from '@weir/protocol';
import type { LiveRescale, Parallelism, RescaleState } from '../deployments/deployment';
import { RESCALE_JSON, toRescale, type RescaleJson } from '../deployments/deployment-rows';

const IN_FLIGHT = `state IN ('PENDING', 'JOINING', 'MOVING')`;

/** A settled rescale's end: DONE with the worker's report, or FAILED / FELL_BACK with the reason. */
export type RescaleOutcome =
  | { readonly state: 'DONE'; readonly reason: string; readonly report: RescaleReport }
  | { readonly state: 'FAILED' | 'FELL_BACK'; readonly reason: string };

/**
 * The SQL over deployment_rescales. The reconciler writes it, always under the deployment's row lock (so one instance
 * at a time drives a rescale); the API reads the latest through the deployment's columns. Every method runs on a
 * tenant-bound client (RLS binds it to the caller's tenant).
 */
@Injectable()
export class RescalesRepository {
  /** Records a PENDING live rescale; null when one is in flight already (the partial unique index keeps one). */
  async insert(
    client: SqlClient,
    r: { tenantId: string; deploymentId: string; rescaleId: string; runNo: number; from: Parallelism; to: Parallelism; fromProcesses: number; toProcesses: number; reason: string },
  ): Promise<LiveRescale | null> {
    const rows = await q<{ rescale: RescaleJson }>(
      client,
      'insert live rescale',
      `WITH s AS (
         INSERT INTO deployment_rescales (tenant_id, deployment_id, rescale_id, run_no, from_parallelism, to_parallelism, from_processes, to_processes, reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (deployment_id) WHERE ${IN_FLIGHT} DO NOTHING
         RETURNING *)
       SELECT ${RESCALE_JSON} AS rescale FROM s`,
      [r.tenantId, r.deploymentId, r.rescaleId, r.runNo, JSON.stringify(r.from), JSON.stringify(r.to), r.fromProcesses, r.toProcesses, r.reason.slice(0, 2000)],
    );
    return rows.length ? toRescale(rows[0].rescale) : null;
  }

  /**
   * Moves an in-flight rescale on (PENDING → JOINING → MOVING), stamping when: JOINING stamps joined_at, MOVING
   * started_at (the first time). Null when it is no longer in flight.
   */
  advance(client: SqlClient, deploymentId: string, rescaleId: string, to: 'JOINING' | 'MOVING', reason: string): Promise<LiveRescale | null> {
    const stamp = to === 'JOINING' ? 'joined_at = coalesce(joined_at, now())' : 'started_at = coalesce(started_at, now())';
    return this.update(client, 'advance live rescale', `state = $3, reason = $4, ${stamp}`, [deploymentId, rescaleId, to, reason.slice(0, 2000)]);
  }

  /** What the rescale waits for, or its progress; null when nothing changed (or it is no longer in flight). */
  note(client: SqlClient, deploymentId: string, rescaleId: string, change: { reason: string; moved?: number; total?: number }): Promise<LiveRescale | null> {
    return this.update(
      client,
      'note live rescale',
      `reason = $3, moved = coalesce($4::int, moved), total = coalesce($5::int, total)`,
      [deploymentId, rescaleId, change.reason.slice(0, 2000), change.moved ?? null, change.total ?? null],
      `AND (reason, moved, total) IS DISTINCT FROM ($3::text, coalesce($4::int, moved), coalesce($5::int, total))`,
    );
  }

  /** DONE, FAILED or FELL_BACK, once: null when the rescale is no longer in flight. */
  settle(client: SqlClient, deploymentId: string, rescaleId: string, outcome: RescaleOutcome): Promise<LiveRescale | null> {
    const report = outcome.state === 'DONE' ? outcome.report : null;
    const moved = report ? report.moved.length : null;
    return this.update(
      client,
      'settle live rescale',
      `state = $3, reason = $4, report = $5, moved = coalesce($6::int, moved), total = CASE WHEN $6::int IS NULL THEN total ELSE greatest(total, $6) END, finished_at = now()`,
      [deploymentId, rescaleId, outcome.state satisfies RescaleState, outcome.reason.slice(0, 2000), report ? JSON.stringify(report) : null, moved],
    );
  }

  private async update(client: SqlClient, what: string, set: string, params: unknown[], extra = ''): Promise<LiveRescale | null> {
    const rows = await q<{ rescale: RescaleJson }>(
      client,
      what,
      `WITH s AS (UPDATE deployment_rescales SET ${set} WHERE deployment_id = $1 AND rescale_id = $2 AND ${IN_FLIGHT} ${extra} RETURNING *)
       SELECT ${RESCALE_JSON} AS rescale FROM s`,
      params,
    );
    return rows.length ? toRescale(rows[0].rescale) : null;
  }
}

async function q<R extends object = object>(client: SqlClient, what: string, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, params)).rows;
  } catch (err) {
    throw toDatabaseError(err, what);
  }
}
