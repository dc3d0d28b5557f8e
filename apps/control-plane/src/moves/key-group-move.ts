import { randomBytes } from 'node:crypto';
import type { MoveReport } from '@weir/protocol';

/**
 * A live move of key groups of one keyed operator between subtasks of a running run, as recorded
 * (deployment_key_group_moves). PENDING until process 0's worker reports it DONE (with its report) or FAILED (with
 * its reason), or until its run ends first (FAILED, saying so). At most one is PENDING per deployment.
 */
export const MOVE_STATES = ['PENDING', 'DONE', 'FAILED'] as const;
export type MoveState = (typeof MOVE_STATES)[number];

/** One key group's move; `fromSubtask` is its owner in the run's routing when the move was requested. */
export interface KeyGroupMoveStep {
  readonly keyGroup: number;
  readonly fromSubtask: number;
  readonly toSubtask: number;
}

export interface KeyGroupMove {
  readonly tenantId: string;
  readonly deploymentId: string;
  readonly moveId: string;
  /** The run it moves key groups of: the worker refuses it for any other. */
  readonly runNo: number;
  readonly operatorId: string;
  readonly moves: readonly KeyGroupMoveStep[];
  readonly reason: string;
  /** Who asked: the API key id (later: the partitioner or the autoscaler). */
  readonly requestedBy: string;
  readonly state: MoveState;
  /** What the worker reported, once DONE. */
  readonly report: MoveReport | null;
  /** Why it FAILED. */
  readonly failure: string | null;
  readonly requestedAt: Date;
  /** When the command first went to process 0's worker; null until then. */
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
}

/** `m` + 12 hex digits of epoch ms + 12 random: ids sort by request time, so the newest-first list is a key order. */
export function newMoveId(now = Date.now()): string {
  return `m${now.toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;
}

export const MOVE_ID_PATTERN = /^m[0-9a-f]{24}$/;

/**
 * The move-key-groups command's idempotency key (also its BullMQ job id on the worker's queue): one per move, so a
 * resend after a control-plane crash, or by another instance, is the same job, dropped by BullMQ and by the worker.
 */
export const moveCommandKey = (deploymentId: string, moveId: string) => `${deploymentId}-move-${moveId}`;
