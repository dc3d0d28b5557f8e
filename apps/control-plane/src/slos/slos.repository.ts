import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import { TenantDb } from '../tenancy';
import type { Slo, SloEvaluation, SloEvent, SloEventKind, SloMinute, SloObjective } from './slo';

/** Minutes are kept as long as the longest window allows (30 days) and a day more. */
export const MINUTE_RETENTION_DAYS = 31;

export interface NewSlo extends SloObjective {
  readonly name: string;
  readonly deploymentId: string;
}

interface SloRow {
  tenant_id: string;
  id: string;
  name: string;
  deployment_id: string;
  percentile: Slo['percentile'];
  threshold_ms: number;
  target: number;
  window_minutes: number;
  state: Slo['status']['state'];
  good_minutes: number;
  bad_minutes: number;
  compliance: number | null;
  burn_rate: number | null;
  burn_rate_5m: number | null;
  evaluated_minute: Date | null;
  created_at: Date;
}

const SLO_COLUMNS = `tenant_id, id, name, deployment_id, percentile, threshold_ms, target, window_minutes, state, good_minutes,
  bad_minutes, compliance, burn_rate, burn_rate_5m, evaluated_minute, created_at`;

/** SQL of SLOs, their minutes and events. Every statement runs under TenantDb, so RLS binds it to one tenant. */
@Injectable()
export class SlosRepository {
  constructor(private readonly db: TenantDb) {}

  run<T>(tenantId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.db.run(tenantId, fn);
  }

  async create(tenantId: string, slo: NewSlo): Promise<Slo> {
    const id = `slo_${randomBytes(10).toString('hex')}`;
    return this.db.run(tenantId, async (client) => {
      const { rows } = await client.query<SloRow>(
        `INSERT INTO slos (tenant_id, id, name, deployment_id, percentile, threshold_ms, target, window_minutes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${SLO_COLUMNS}`,
        [tenantId, id, slo.name, slo.deploymentId, slo.percentile, slo.thresholdMs, slo.target, slo.windowMinutes],
      );
      return toSlo(rows[0]);
    });
  }

  async find(tenantId: string, id: string): Promise<Slo | undefined> {
    const rows = await this.db.read<SloRow>(tenantId, { name: 'slos.find', text: `SELECT ${SLO_COLUMNS} FROM slos WHERE id = $1`, values: [id] });
    return rows[0] ? toSlo(rows[0]) : undefined;
  }

  async list(tenantId: string, limit: number, afterId: string | undefined, deploymentId: string | undefined): Promise<Slo[]> {
    const rows = await this.db.read<SloRow>(tenantId, {
      name: 'slos.list',
      text: `SELECT ${SLO_COLUMNS} FROM slos
         WHERE ($2::text IS NULL OR id > $2) AND ($3::text IS NULL OR deployment_id = $3)
         ORDER BY id LIMIT $1`,
      values: [limit, afterId ?? null, deploymentId ?? null],
    });
    return rows.map(toSlo);
  }

  /** The first `perDeployment` SLOs of each deployment in id order (as `list` orders them), by deployment. */
  async listByDeployment(tenantId: string, deploymentIds: readonly string[], perDeployment: number): Promise<Slo[]> {
    const rows = await this.db.read<SloRow>(tenantId, {
      name: 'slos.listByDeployment',
      text: `SELECT ${SLO_COLUMNS} FROM (
           SELECT ${SLO_COLUMNS}, row_number() OVER (PARTITION BY deployment_id ORDER BY id) AS nth
           FROM slos WHERE deployment_id = ANY($1::text[])
         ) ranked
         WHERE nth <= $2 ORDER BY deployment_id, id`,
      values: [deploymentIds, perDeployment],
    });
    return rows.map(toSlo);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.db.run(tenantId, async (client) => {
      const { rowCount } = await client.query('DELETE FROM slos WHERE id = $1', [id]);
      return (rowCount ?? 0) > 0;
    });
  }

  /** True when the tenant has this deployment (RLS: another tenant's reads as absent). */
  async deploymentExists(tenantId: string, deploymentId: string): Promise<boolean> {
    return (await this.db.read(tenantId, { text: 'SELECT 1 FROM deployments WHERE id = $1', values: [deploymentId] })).length !== 0;
  }

  async events(tenantId: string, sloId: string, limit: number, afterId: string | undefined): Promise<SloEvent[]> {
    const rows = await this.db.read<{
      id: string; slo_id: string; kind: SloEventKind; minute: Date; compliance: number; burn_rate: number;
      burn_rate_5m: number | null; reason: string; at: Date;
    }>(tenantId, {
      // ORDER BY names the table's bigint column: a bare `id` would sort the text output column ("100" < "99").
      text: `SELECT id::text, slo_id, kind, minute, compliance, burn_rate, burn_rate_5m, reason, at FROM slo_events
         WHERE slo_id = $1 AND ($3::bigint IS NULL OR id > $3) ORDER BY slo_events.id LIMIT $2`,
      values: [sloId, limit, afterId ?? null],
    });
    return rows.map((r) => ({
      id: r.id, sloId: r.slo_id, kind: r.kind, minute: r.minute, compliance: r.compliance, burnRate: r.burn_rate,
      burnRate5m: r.burn_rate_5m, reason: r.reason, at: r.at,
    }));
  }

  /** Records a closed minute; false when it was already recorded (a late snapshot reopened it). */
  async insertMinute(client: PoolClient, tenantId: string, deploymentId: string, m: SloMinute): Promise<boolean> {
    const { rowCount } = await client.query(
      `INSERT INTO slo_minutes (tenant_id, deployment_id, minute, samples, p50_ms, p95_ms, p99_ms, p999_ms, max_ms)
       VALUES ($1, $2, to_timestamp($3::double precision / 1000), $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
      [tenantId, deploymentId, m.minute, m.samples, m.p50, m.p95, m.p99, m.p999, m.max],
    );
    return (rowCount ?? 0) > 0;
  }

  async pruneMinutes(client: PoolClient, deploymentId: string): Promise<void> {
    await client.query(`DELETE FROM slo_minutes WHERE deployment_id = $1 AND minute < now() - interval '${MINUTE_RETENTION_DAYS} days'`, [deploymentId]);
  }

  /** The deployment's SLOs, locked for this transaction so that two evaluations of one SLO run one after the other. */
  async lockSlosOf(client: PoolClient, deploymentId: string): Promise<Slo[]> {
    const { rows } = await client.query<SloRow>(
      `SELECT ${SLO_COLUMNS} FROM slos WHERE deployment_id = $1 ORDER BY id FOR UPDATE`,
      [deploymentId],
    );
    return rows.map(toSlo);
  }

  /** Minutes with start in (fromMs, toMs]. */
  async minutes(client: PoolClient, deploymentId: string, fromMs: number, toMs: number): Promise<SloMinute[]> {
    const { rows } = await client.query<{ minute: Date; samples: string; p50_ms: number; p95_ms: number; p99_ms: number; p999_ms: number; max_ms: number }>(
      `SELECT minute, samples, p50_ms, p95_ms, p99_ms, p999_ms, max_ms FROM slo_minutes
       WHERE deployment_id = $1 AND minute > to_timestamp($2::double precision / 1000)
         AND minute <= to_timestamp($3::double precision / 1000)
       ORDER BY minute`,
      [deploymentId, fromMs, toMs],
    );
    return rows.map((r) => ({
      minute: r.minute.getTime(), samples: Number(r.samples), p50: r.p50_ms, p95: r.p95_ms, p99: r.p99_ms, p999: r.p999_ms, max: r.max_ms,
    }));
  }

  async saveEvaluation(client: PoolClient, sloId: string, e: SloEvaluation): Promise<void> {
    await client.query(
      `UPDATE slos SET state = $2, good_minutes = $3, bad_minutes = $4, compliance = $5, burn_rate = $6, burn_rate_5m = $7,
         evaluated_minute = to_timestamp($8::double precision / 1000)
       WHERE id = $1`,
      [sloId, e.state, e.goodMinutes, e.badMinutes, e.compliance, e.burnRate, e.burnRate5m, e.minute],
    );
  }

  async insertEvent(client: PoolClient, tenantId: string, sloId: string, kind: SloEventKind, e: SloEvaluation, reason: string): Promise<void> {
    await client.query(
      `INSERT INTO slo_events (tenant_id, slo_id, kind, minute, compliance, burn_rate, burn_rate_5m, reason)
       VALUES ($1, $2, $3, to_timestamp($4::double precision / 1000), $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [tenantId, sloId, kind, e.minute, e.compliance ?? 0, e.burnRate ?? 0, e.burnRate5m, reason],
    );
  }
}

function toSlo(row: SloRow): Slo {
  return {
    tenantId: row.tenant_id,
    id: row.id,
    name: row.name,
    deploymentId: row.deployment_id,
    percentile: row.percentile,
    thresholdMs: row.threshold_ms,
    target: row.target,
    windowMinutes: row.window_minutes,
    createdAt: row.created_at,
    status: {
      state: row.state,
      minute: row.evaluated_minute ? row.evaluated_minute.getTime() : null,
      goodMinutes: row.good_minutes,
      badMinutes: row.bad_minutes,
      compliance: row.compliance,
      burnRate: row.burn_rate,
      burnRate5m: row.burn_rate_5m,
      errorBudgetRemaining: row.burn_rate === null ? null : 1 - row.burn_rate,
    },
  };
}
