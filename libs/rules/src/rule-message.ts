import type { RuleLimits, RuleMessage } from './rule';
import { RULE_ID_PATTERN } from './rules-schema';
import { type RuleProblem, validateRule } from './validate-rule';

const RULE_ID = new RegExp(RULE_ID_PATTERN);

export type RuleMessageValidation = { readonly ok: true; readonly message: RuleMessage } | { readonly ok: false; readonly problems: readonly RuleProblem[] };

/**
 * Validates one message of a rules topic: a deletion (`{ ruleId, deleted: true }`) or a rule version, checked as
 * validateRule does.
 */
export function validateRuleMessage(value: unknown, limits: RuleLimits, path = 'rule'): RuleMessageValidation {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'deleted' in value) {
    return validateDeletion(value as Record<string, unknown>, path);
  }
  const result = validateRule(value, limits, path);
  return result.ok ? { ok: true, message: result.rule } : result;
}

function validateDeletion(value: Record<string, unknown>, path: string): RuleMessageValidation {
  const problems: RuleProblem[] = [];
  if (value.deleted !== true) problems.push({ path: `${path}.deleted`, message: 'must be true (a deletion) or absent (a rule version)' });
  if (typeof value.ruleId !== 'string' || !RULE_ID.test(value.ruleId)) {
    problems.push({ path: `${path}.ruleId`, message: 'is required: the id of the rule to delete' });
  }
  if (value.version !== undefined && !(Number.isInteger(value.version) && (value.version as number) >= 1)) {
    problems.push({ path: `${path}.version`, message: 'must be an integer of at least 1' });
  }
  if (value.shadow !== undefined && typeof value.shadow !== 'boolean') problems.push({ path: `${path}.shadow`, message: 'must be a boolean' });
  for (const key of Object.keys(value)) {
    if (!['ruleId', 'deleted', 'version', 'shadow'].includes(key)) {
      problems.push({ path: `${path}.${key}`, message: 'unknown property; a deletion has ruleId, deleted, version, shadow' });
    }
  }
  return problems.length === 0 ? { ok: true, message: value as unknown as RuleMessage } : { ok: false, problems };
}
