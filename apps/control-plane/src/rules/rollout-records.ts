import type { ProducedRecord } from '@weir/kafka';
import type { Rollout, RuleSetVersion } from './rule-set';

/** The rule ids a rollout must have acknowledged: the version's rules, then the previous set's rules it drops. */
export function expectedRuleIds(version: RuleSetVersion, previousRules: readonly Record<string, unknown>[]): string[] {
  const ids = version.rules.map((r) => String(r.ruleId));
  return [...ids, ...previousRules.map((r) => String(r.ruleId)).filter((id) => !ids.includes(id))];
}

/**
 * The records of a rollout, in order: each rule as `{ ...rule, version }`, then a deletion for each dropped rule; all
 * stamped with the rollout's timestamp (which the job's acks echo). Shadow rollouts mark every record `shadow: true`
 * and key it by the rule's shadow slot, so a topic compacted by key keeps the latest live and shadow version apart.
 */
export function rolloutRecords(rollout: Rollout, version: RuleSetVersion): ProducedRecord[] {
  const shadow = rollout.kind === 'SHADOW' ? { shadow: true } : {};
  const slot = (ruleId: string) => (rollout.kind === 'SHADOW' ? `${ruleId}#shadow` : ruleId);
  return [
    ...version.rules.map((rule) => ({ key: slot(String(rule.ruleId)), value: JSON.stringify({ ...rule, version: version.version, ...shadow }) })),
    ...rollout.expectedRuleIds
      .slice(version.rules.length)
      .map((ruleId) => ({ key: slot(ruleId), value: JSON.stringify({ ruleId, deleted: true, version: version.version, ...shadow }) })),
  ].map((r) => ({ ...r, topic: rollout.rulesTopic, timestamp: rollout.publishTs }));
}
