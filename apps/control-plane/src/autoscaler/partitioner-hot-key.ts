import type { ScalingDecision } from '../partitioner/scaling-decision';
import type { PartitionerHotKey } from './scaling-proposal';

/** A partitioner decision older than this says nothing of today's hot keys (it records a persisting one every 5 min). */
export const HOT_KEY_FRESH_MS = 600_000;

/**
 * The hot key a partitioner decision declined to split because its state is not mergeable, with the share it was
 * flagged at; null when the decision declined no such split or is stale. Such a key stays on one subtask whatever the
 * parallelism: the autoscaler leaves its subtask to the partitioner rather than adding subtasks that cannot take it.
 */
export function partitionerHotKey(decision: ScalingDecision, nowMs: number): PartitionerHotKey | null {
  if (decision.source !== 'partitioner' || nowMs - decision.decidedAt.getTime() > HOT_KEY_FRESH_MS) return null;
  const declined = decision.decision.declined.find((d) => d.action === 'split' && d.reason === 'not-mergeable' && typeof d.key === 'string');
  if (!declined || typeof declined.key !== 'string') return null;
  const key = declined.key;
  const flagged = decision.detection.hotKeys.find((k) => k.key === key);
  return { decisionId: decision.decisionId, key, keyGroup: declined.keyGroup ?? flagged?.keyGroup ?? -1, share: flagged?.share ?? 0 };
}
