import type { InputPosition, Rollout, RolloutAck, RolloutStatus, SubtaskProgress } from './rule-set';

/**
 * Folds a rollout's acks into per-subtask progress. A subtask applies the rollout's version once it acknowledged
 * every expected rule (applied or deleted); the rollout is complete when every subtask of every acknowledging
 * operator did, counting subtasks by the parallelism the acks report (a subtask that has not acked yet is listed
 * with appliedVersion null).
 */
export function rolloutStatus(rollout: Rollout, acks: readonly RolloutAck[]): RolloutStatus {
  const byOperator = new Map<string, { parallelism: number; subtasks: Map<number, RolloutAck[]> }>();
  for (const ack of acks) {
    const op = byOperator.get(ack.operatorId) ?? { parallelism: 0, subtasks: new Map<number, RolloutAck[]>() };
    op.parallelism = Math.max(op.parallelism, ack.parallelism);
    op.subtasks.set(ack.subtask, [...(op.subtasks.get(ack.subtask) ?? []), ack]);
    byOperator.set(ack.operatorId, op);
  }
  const expected = new Set(rollout.expectedRuleIds);
  const subtasks: SubtaskProgress[] = [];
  for (const [operatorId, op] of [...byOperator].sort(([a], [b]) => a.localeCompare(b))) {
    for (let subtask = 0; subtask < op.parallelism; subtask++) {
      const mine = op.subtasks.get(subtask) ?? [];
      const done = new Set(mine.filter((a) => a.outcome !== 'rejected' && expected.has(a.ruleId)).map((a) => a.ruleId));
      const complete = done.size === expected.size;
      subtasks.push({
        operatorId,
        subtask,
        parallelism: op.parallelism,
        appliedVersion: complete ? rollout.version : null,
        acknowledgedRules: done.size,
        rejected: mine.filter((a) => a.outcome === 'rejected').map((a) => ({ ruleId: a.ruleId, problems: a.problems ?? [] })),
        rulesOffset: complete ? rollout.rulesOffset : null,
        inputPosition: complete ? latestPosition(mine) : null,
        lastAckAt: mine.length ? new Date(Math.max(...mine.map((a) => a.ackedAt.getTime()))) : null,
      });
    }
  }
  const total = byOperator.size ? subtasks.length : null;
  return { ...rollout, subtasks, acknowledgedSubtasks: subtasks.filter((s) => s.appliedVersion !== null).length, totalSubtasks: total };
}

/** ACTIVE when every subtask applied it, FAILED when a subtask rejected a rule, otherwise still rolling out. */
export function outcomeOf(status: RolloutStatus): { phase: 'ACTIVE' | 'FAILED'; message: string } | null {
  const rejected = status.subtasks.flatMap((s) => s.rejected.map((r) => `subtask ${s.subtask} rejected ${r.ruleId}: ${r.problems.join('; ')}`));
  if (rejected.length) return { phase: 'FAILED', message: rejected.join(' | ').slice(0, 1_000) };
  if (status.totalSubtasks !== null && status.acknowledgedSubtasks === status.totalSubtasks) {
    return { phase: 'ACTIVE', message: `every subtask (${status.totalSubtasks}) applies version ${status.version}` };
  }
  return null;
}

/**
 * A subtask applies a version's rules one record at a time; it has switched once the last of them is applied, so
 * per partition the highest position among its acks (positions only grow within a subtask's input).
 */
function latestPosition(acks: readonly RolloutAck[]): InputPosition | null {
  const out: Record<string, string> = {};
  let any = false;
  for (const ack of acks) {
    if (!ack.inputPosition) continue;
    any = true;
    for (const [at, offset] of Object.entries(ack.inputPosition)) {
      if (out[at] === undefined || BigInt(offset) > BigInt(out[at])) out[at] = offset;
    }
  }
  return any ? out : null;
}
