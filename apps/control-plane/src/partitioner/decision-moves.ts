import type { PartitioningDecision } from '@weir/partitioner';
import type { MoveKeyGroupsBody } from '../moves/move-request';

/** The moves API's limit on a reason. */
const MOVE_REASON_MAX = 500;

/**
 * A decision's moves as the request a tenant would POST to …/key-group-moves, so the partitioner's moves go through
 * the same checks (resolveMoves against the run) and the same record and reconciler drive. The reason names the
 * decision first: GET …/scaling-decisions/{decisionId} has the rest. Null when the decision moves nothing.
 */
export function moveRequestOf(operatorId: string, decision: Pick<PartitioningDecision, 'moves' | 'imbalanceBefore' | 'imbalanceAfter'>, decisionId: string): MoveKeyGroupsBody | null {
  if (decision.moves.length === 0) return null;
  const reason = `partitioner decision ${decisionId}: ${decision.moves.length} key group${decision.moves.length === 1 ? '' : 's'} of ${operatorId} to even the load, imbalance ${decision.imbalanceBefore.toFixed(2)}× → ${decision.imbalanceAfter.toFixed(2)}×`;
  return {
    operatorId,
    moves: decision.moves.map((m) => ({ keyGroup: m.keyGroup, toSubtask: m.toSubtask })),
    reason: reason.slice(0, MOVE_REASON_MAX),
  };
}
