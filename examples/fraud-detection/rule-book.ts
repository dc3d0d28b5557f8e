import { formatProblem, isRuleDeletion, type RuleLimits, validateRuleMessage, type VersionedRule } from '@weir/rules';
import type { BroadcastState } from '@weir/engine';

export type RuleChange =
  | { readonly outcome: 'applied'; readonly rule: VersionedRule }
  | { readonly outcome: 'deleted'; readonly ruleId: string }
  | { readonly outcome: 'rejected'; readonly ruleId?: string; readonly problems: readonly string[] };

/**
 * Applies one rules message to a broadcast state (rule id → current version). Deterministic, so every subtask of
 * every operator that applies the same messages in the same order holds the same rules: an unversioned rule gets the
 * previous version + 1; a versioned one is taken as is (a rollback re-publishes an earlier version).
 */
export function applyRuleMessage(value: unknown, rules: BroadcastState<VersionedRule>, limits: RuleLimits): RuleChange {
  const checked = validateRuleMessage(value, limits);
  if (!checked.ok) {
    const ruleId = (value as { ruleId?: unknown } | null)?.ruleId;
    return { outcome: 'rejected', ruleId: typeof ruleId === 'string' ? ruleId : undefined, problems: checked.problems.map(formatProblem) };
  }
  const message = checked.message;
  if (isRuleDeletion(message)) {
    rules.remove(message.ruleId);
    return { outcome: 'deleted', ruleId: message.ruleId };
  }
  const version = message.version ?? (rules.get(message.ruleId)?.version ?? 0) + 1;
  const rule: VersionedRule = { ...message, version };
  rules.put(rule.ruleId, rule);
  return { outcome: 'applied', rule };
}
