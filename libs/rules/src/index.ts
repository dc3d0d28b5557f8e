/**
 * @weir/rules: the fraud rule model (rules as versioned JSON documents), its JSON Schema, its validation against a
 * job's event fields and limits, and the aggregate/compare primitives every evaluator shares. Design:
 * docs/fraud-detection.md.
 */
export {
  AGGREGATE_FUNCTIONS,
  COMPARISONS,
  COMPARISON_SYMBOLS,
  RULE_STATES,
  isRuleDeletion,
  ruleSlot,
  type AggregateFunctionName,
  type Comparison,
  type ComparisonName,
  type EventFields,
  type FieldType,
  type Rule,
  type RuleDeletion,
  type RuleLimits,
  type RuleMessage,
  type RuleState,
  type VersionedRule,
} from './rule';
export { RULE_ID_PATTERN, ruleJsonSchema, rulesSchemaFor } from './rules-schema';
export {
  RuleValidationError,
  assertValidRule,
  formatProblem,
  validateRule,
  validateRules,
  type RuleProblem,
  type RuleValidation,
} from './validate-rule';
export { validateRuleMessage, type RuleMessageValidation } from './rule-message';
export { EventSchemaError, eventFieldsFromJsonSchema } from './event-fields';
export { WindowAggregate, aggregateInput, compare, groupingKeyOf } from './evaluate';
export type { Alert } from './alert';
