import { formatProblem, isRuleDeletion, type RuleLimits, ruleSlot, validateRuleMessage, type VersionedRule } from '@weir/rules';
import type { BroadcastState } from '@weir/engine';

export type RuleChange =
  | { readonly outcome: 'applied'; readonly rule: VersionedRule }
  | { readonly outcome: 'deleted'; readonly ruleId: string; readonly shadow: boolean }
  | { readonly outcome: 'rejected'; readonly ruleId?: string; readonly problems: readonly string[] };

/**
 * Applies one rules message to a broadcast state (rule slot — the rule id, or `id#shadow` for a shadow version — →
 * current version). Deterministic, so every subtask of
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
    rules.remove(ruleSlot(message));
    return { outcome: 'deleted', ruleId: message.ruleId, shadow: message.shadow === true };
  }
  const version = message.version ?? (rules.get(ruleSlot(message))?.version ?? 0) + 1;
  const rule: VersionedRule = { ...message, version };
  rules.put(ruleSlot(rule), rule);
  return { outcome: 'applied', rule };
}
