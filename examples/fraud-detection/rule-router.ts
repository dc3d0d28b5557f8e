import type { KeyedBroadcastProcessFunction } from '@weir/engine';
import { groupingKeyOf, type RuleLimits, type VersionedRule } from '@weir/rules';
import type { RouterOutput } from './messages';
import { applyRuleMessage } from './rule-book';
import type { Transaction } from './transaction';

/**
 * Dynamic keying: every transaction is emitted once per ACTIVE rule version (live and shadow), keyed by that rule's grouping keys and stamped
 * with the rule version in force here. The stamp is what makes a swap exact: a transaction is judged by the version
 * that was current when it reached this operator, whatever the evaluator's own copy of the rules says by then.
 * Rules messages are acknowledged per subtask (applied / deleted / rejected with the problems), with the position in
 * the transactions input at which the subtask applied them.
 *
 * It is keyed (by txId) only because the SDK's broadcast connection needs a keyed stream; it keeps no keyed state.
 */
export function ruleRouter(limits: RuleLimits): KeyedBroadcastProcessFunction<string, Transaction, unknown, VersionedRule, RouterOutput> {
  return {
    processElement(tx, ctx, out) {
      for (const [, rule] of ctx.broadcastState.entries()) {
        if (rule.state !== 'ACTIVE') continue;
        const key = groupingKeyOf(rule, tx as unknown as Record<string, unknown>);
        if (key !== undefined) out.collect({ type: 'ruled', rule, key, tx });
      }
    },

    processBroadcastElement(value, ctx, out) {
      const change = applyRuleMessage(value, ctx.broadcastState, limits);
      const { tenantId, jobId, operatorId, subtask, parallelism } = ctx.operator;
      const who = { tenantId, jobId, operatorId, subtask, parallelism, ts: ctx.timestamp, appliedAt: Date.now(), inputPosition: ctx.inputPosition() };
      if (change.outcome === 'applied') {
        const { ruleId, version, state, shadow } = change.rule;
        out.collect({ type: 'ack', outcome: 'applied', ruleId, ruleVersion: version, state, ...(shadow ? { shadow } : {}), ...who });
      } else if (change.outcome === 'deleted') {
        out.collect({ type: 'ack', outcome: 'deleted', ruleId: change.ruleId, ...(change.shadow ? { shadow: true as const } : {}), ...who });
      } else {
        out.collect({ type: 'ack', outcome: 'rejected', ruleId: change.ruleId, problems: change.problems, ...who });
      }
    },
  };
}
