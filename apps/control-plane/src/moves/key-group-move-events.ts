import { Injectable } from '@nestjs/common';
import type { MoveReport } from '@weir/protocol';
import { EventPublisher } from '../events/events';
import type { KeyGroupMove, KeyGroupMoveStep, MoveState } from './key-group-move';

/** What a move publishes on `weir:<prefix>:moves:<tenantId>:<deploymentId>` as it is requested and as it settles. */
export interface KeyGroupMoveMessage {
  readonly deploymentId: string;
  readonly moveId: string;
  readonly runNo: number;
  readonly operatorId: string;
  readonly state: MoveState;
  readonly moves: readonly KeyGroupMoveStep[];
  readonly reason: string;
  readonly requestedBy: string;
  readonly report: MoveReport | null;
  readonly failure: string | null;
  /** Epoch ms. */
  readonly requestedAt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
}

export function toMoveMessage(m: KeyGroupMove): KeyGroupMoveMessage {
  return {
    deploymentId: m.deploymentId,
    moveId: m.moveId,
    runNo: m.runNo,
    operatorId: m.operatorId,
    state: m.state,
    moves: m.moves,
    reason: m.reason,
    requestedBy: m.requestedBy,
    report: m.report,
    failure: m.failure,
    requestedAt: m.requestedAt.getTime(),
    startedAt: m.startedAt?.getTime() ?? null,
    finishedAt: m.finishedAt?.getTime() ?? null,
  };
}

/**
 * Moves out to GraphQL subscribers (keyGroupMoves), after the transaction that recorded them. Best effort, as every
 * subscription event: the record is in Postgres, and GET …/key-group-moves/{moveId} reads it.
 */
@Injectable()
export class KeyGroupMoveEvents {
  constructor(private readonly events: EventPublisher) {}

  publish(move: KeyGroupMove): Promise<void> {
    return this.events.publish('moves', move.tenantId, move.deploymentId, toMoveMessage(move));
  }
}
