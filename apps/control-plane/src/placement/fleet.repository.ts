import { Inject, Injectable } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { toDatabaseError, type PoolClient } from '@weir/db';
import type { RunningSubtask } from '@weir/protocol';
import { WEIR_CONFIG } from '../control-plane-options';
import type { WorkerCapacity } from './placement';

/** Serialises placement decisions across control-plane instances (two would otherwise fill the same free slot). */
const PLACEMENT_LOCK = 0x7765_6972_7030; // "weirp0"

/**
 * The live fleet with the slots taken on each worker. Open runs are counted through weir_worker_slots_in_use()
 * (runs are tenant rows; the function sums them platform-wide without exposing them).
 */
const LIVE_WORKERS = `
SELECT w.id, w.slots, w.running_subtasks, coalesce(u.slots, 0)::int AS planned
FROM workers w LEFT JOIN weir_worker_slots_in_use() u ON u.worker_id = w.id
WHERE w.status = 'ALIVE' AND w.installation = $1`;

@Injectable()
export class FleetRepository {
  /** Only this installation's workers (its queue prefix) receive its commands, so only they are candidates. */
  private readonly installation: string;

  constructor(@Inject(WEIR_CONFIG) config: WeirConfig) {
    this.installation = config.WEIR_QUEUE_PREFIX;
  }

  /**
   * Takes the placement lock for the rest of the caller's transaction and returns the live workers' capacity.
   * The caller inserts its run in the same transaction, so the next decision sees that run's slots.
   */
  async lockAndReadCapacity(client: PoolClient): Promise<WorkerCapacity[]> {
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [PLACEMENT_LOCK]);
      const { rows } = await client.query<{ id: string; slots: number; running_subtasks: RunningSubtask[]; planned: number }>(LIVE_WORKERS, [this.installation]);
      return rows.map((r) => ({ id: r.id, slots: r.slots, slotsInUse: Math.max(r.planned, reportedSlots(r.running_subtasks)) }));
    } catch (err) {
      throw toDatabaseError(err, 'read worker capacity');
    }
  }

  /**
   * The free slots of the live fleet without taking the placement lock: what a decision may count on now (the
   * autoscaler's), never a reservation; the placement that follows takes the lock and counts again.
   */
  async freeSlots(client: PoolClient): Promise<FleetFreeSlots> {
    try {
      const { rows } = await client.query<{ id: string; slots: number; running_subtasks: RunningSubtask[]; planned: number }>(LIVE_WORKERS, [this.installation]);
      const free = rows.reduce((n, r) => n + Math.max(0, r.slots - Math.max(r.planned, reportedSlots(r.running_subtasks))), 0);
      return { free, live: rows.length };
    } catch (err) {
      throw toDatabaseError(err, 'read free slots');
    }
  }
}

/** The live fleet's free slots, as placement would count them now (read without the placement lock: a view, no claim). */
export interface FleetFreeSlots {
  readonly free: number;
  readonly live: number;
}

/**
 * Slots a worker's reported subtasks hold: one per job host process (tenant, job, process), each counted as its widest
 * operator's subtasks there. A process of a multi-process run holds one subtask per operator, so it counts one slot;
 * a job reported without process indexes (all process 0: a worker from before runs had several processes) runs whole
 * in one process and counts its widest operator, as slotsFor() did.
 */
export function reportedSlots(subtasks: readonly RunningSubtask[]): number {
  const perOperator = new Map<string, number>();
  for (const s of subtasks) {
    const key = `${s.tenantId}/${s.jobId}/${s.process ?? 0}/${s.operatorId}`;
    perOperator.set(key, (perOperator.get(key) ?? 0) + 1);
  }
  const perProcess = new Map<string, number>();
  for (const [key, n] of perOperator) {
    const process = key.slice(0, key.lastIndexOf('/'));
    perProcess.set(process, Math.max(perProcess.get(process) ?? 0, n));
  }
  let total = 0;
  for (const n of perProcess.values()) total += n;
  return total;
}
