import { Inject, Injectable } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { toDatabaseError, type Pool } from '@weir/db';
import type { WorkerEvent } from '@weir/protocol';
import { WEIR_CONFIG } from '../control-plane-options';
import { PG_POOL } from '../infrastructure/tokens';
import { LOST_AFTER_INTERVALS, LOST_FLOOR_MS, type SilentWorker } from './liveness-rule';
import type { Worker, WorkerStatus } from './worker';

interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  slots: number;
  version: string;
  status: WorkerStatus;
  started_at: Date;
  last_seen_at: Date;
  status_changed_at: Date;
  heartbeat_ms: number;
  running_subtasks: Worker['runningSubtasks'];
}

const COLUMNS = 'id, host, pid, slots, version, status, started_at, last_seen_at, status_changed_at, heartbeat_ms, running_subtasks';

/**
 * Applies one worker event. An event wins only when it is newer than what the row holds: a later incarnation
 * (started_at), or the same incarnation with a higher seq that is not already STOPPED. So events handled out of
 * order, or twice, or by two control-plane instances at once, never move a worker backwards.
 * last_seen_at is the database's clock, the one clock every control-plane instance shares.
 */
const APPLY_EVENT = `
INSERT INTO workers AS w (id, host, pid, slots, version, started_at, last_seen_at, status, heartbeat_ms, last_seq,
                          running_subtasks, status_changed_at, installation)
VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8, $9, $10, now(), $11)
ON CONFLICT (id) DO UPDATE SET
  installation = EXCLUDED.installation,
  host = EXCLUDED.host, pid = EXCLUDED.pid, slots = EXCLUDED.slots, version = EXCLUDED.version,
  started_at = EXCLUDED.started_at, last_seen_at = now(), heartbeat_ms = EXCLUDED.heartbeat_ms,
  last_seq = EXCLUDED.last_seq, running_subtasks = EXCLUDED.running_subtasks, status = EXCLUDED.status,
  status_changed_at = CASE WHEN w.status = EXCLUDED.status THEN w.status_changed_at ELSE now() END
WHERE EXCLUDED.started_at > w.started_at
   OR (EXCLUDED.started_at = w.started_at AND EXCLUDED.last_seq > w.last_seq AND w.status <> 'STOPPED')
RETURNING ${COLUMNS}`;

/** Silence beyond the timeout, LOST_FLOOR_MS at least; $1 intervals, $2 the floor. */
const TIMED_OUT = `last_seen_at < now() - make_interval(secs => GREATEST(heartbeat_ms * $1::float8, $2::float8) / 1000)`;

/** ALIVE workers silent for longer than their timeout, by the database's clock: candidates for LOST. */
const SILENT_WORKERS = `
SELECT id, heartbeat_ms, extract(epoch FROM now() - last_seen_at)::float8 * 1000 AS silent_ms
FROM workers WHERE installation = $3 AND status = 'ALIVE' AND ${TIMED_OUT}`;

/**
 * Idempotent, so every control-plane instance may run it on its own schedule. The timeout is checked again: a
 * heartbeat applied since the candidates were read keeps its worker ALIVE.
 */
const MARK_LOST = `
UPDATE workers SET status = 'LOST', status_changed_at = now()
WHERE installation = $3 AND status = 'ALIVE' AND id = ANY($4::text[]) AND ${TIMED_OUT}
RETURNING id`;

@Injectable()
export class WorkersRepository {
  /** This control plane's installation (its queue prefix): the only workers it sees. */
  private readonly installation: string;

  constructor(@Inject(PG_POOL) private readonly pool: Pool, @Inject(WEIR_CONFIG) config: WeirConfig) {
    this.installation = config.WEIR_QUEUE_PREFIX;
  }

  /** The updated worker, or null when the event was stale and changed nothing. */
  async applyEvent(event: WorkerEvent): Promise<Worker | null> {
    const w = event.worker;
    const status: WorkerStatus = event.type === 'worker.stopping' ? 'STOPPED' : 'ALIVE';
    const running = event.type === 'worker.stopping' ? [] : event.runningSubtasks;
    const rows = await this.query<WorkerRow>('apply worker event', APPLY_EVENT, [
      w.workerId,
      w.host,
      w.pid,
      w.slots,
      w.version,
      new Date(w.startedAt).toISOString(),
      status,
      w.heartbeatMs,
      event.seq,
      JSON.stringify(running),
      this.installation,
    ]);
    return rows.length ? toWorker(rows[0]) : null;
  }

  async silentWorkers(): Promise<SilentWorker[]> {
    const rows = await this.query<{ id: string; heartbeat_ms: number; silent_ms: number }>('find silent workers', SILENT_WORKERS, [
      LOST_AFTER_INTERVALS,
      LOST_FLOOR_MS,
      this.installation,
    ]);
    return rows.map((r) => ({ id: r.id, heartbeatMs: r.heartbeat_ms, silentMs: r.silent_ms }));
  }

  /** Of `ids`, those this call declared LOST (still ALIVE and still silent beyond their timeout). */
  async markLost(ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.query<{ id: string }>('mark lost workers', MARK_LOST, [LOST_AFTER_INTERVALS, LOST_FLOOR_MS, this.installation, ids]);
    return rows.map((r) => r.id);
  }

  async find(id: string): Promise<Worker | null> {
    const rows = await this.query<WorkerRow>('find worker', `SELECT ${COLUMNS} FROM workers WHERE id = $1 AND installation = $2`, [id, this.installation]);
    return rows.length ? toWorker(rows[0]) : null;
  }

  /** Up to `limit` workers in id order, after `afterId` when given. */
  async list(limit: number, afterId: string | undefined, status: WorkerStatus | undefined): Promise<Worker[]> {
    const rows = await this.query<WorkerRow>(
      'list workers',
      `SELECT ${COLUMNS} FROM workers
       WHERE installation = $4 AND ($1::text IS NULL OR id > $1) AND ($2::text IS NULL OR status = $2)
       ORDER BY id LIMIT $3`,
      [afterId ?? null, status ?? null, limit, this.installation],
    );
    return rows.map(toWorker);
  }

  private async query<R extends object>(what: string, sql: string, params: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw toDatabaseError(err, what);
    }
  }
}

function toWorker(row: WorkerRow): Worker {
  return {
    id: row.id,
    host: row.host,
    pid: row.pid,
    slots: row.slots,
    version: row.version,
    status: row.status,
    startedAt: row.started_at,
    lastSeenAt: row.last_seen_at,
    statusChangedAt: row.status_changed_at,
    heartbeatMs: row.heartbeat_ms,
    runningSubtasks: row.running_subtasks,
  };
}
