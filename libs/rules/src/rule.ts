/**
 * The fraud rule model, shared by the job that evaluates rules and the control plane that stores and rolls them out.
 * A rule is plain JSON so it can travel as a broadcast record, sit in a checkpoint and be stored as a version.
 */

export const RULE_STATES = ['ACTIVE', 'PAUSED'] as const;
export type RuleState = (typeof RULE_STATES)[number];

export const AGGREGATE_FUNCTIONS = ['SUM', 'AVG', 'MIN', 'MAX', 'COUNT'] as const;
export type AggregateFunctionName = (typeof AGGREGATE_FUNCTIONS)[number];

/** The operators as written in a rule, with their names (the symbol is what JSON carries). */
export const COMPARISONS = {
  '>': 'GREATER',
  '>=': 'GREATER_OR_EQUAL',
  '<': 'LESS',
  '<=': 'LESS_OR_EQUAL',
  '=': 'EQUAL',
  '!=': 'NOT_EQUAL',
} as const;
export type Comparison = keyof typeof COMPARISONS;
export type ComparisonName = (typeof COMPARISONS)[Comparison];
export const COMPARISON_SYMBOLS = Object.keys(COMPARISONS) as Comparison[];

export interface Rule {
  /** Stable name of the rule; versions of one rule share it. */
  readonly ruleId: string;
  /** Assigned by the control plane; a job numbers unversioned rules itself (previous + 1). */
  readonly version?: number;
  readonly state: RuleState;
  /** Fields of the event whose values form the key the rule aggregates by, in this order. */
  readonly groupingKeys: readonly string[];
  /** A numeric field of the event; COUNT needs none. */
  readonly aggregateField?: string;
  readonly function: AggregateFunctionName;
  readonly comparison: Comparison;
  readonly limit: number;
  /** The aggregate covers the key's events with timestamps in (ts − windowMs, ts]. */
  readonly windowMs: number;
  /**
   * A shadow version runs beside the live version of the same rule id, with its own state, and its alerts go to the
   * shadow output instead of the alerts: what a candidate would have raised, without raising it.
   */
  readonly shadow?: boolean;
}

/** A rule with its version settled: what a job stamps on every record it judges. */
export interface VersionedRule extends Rule {
  readonly version: number;
}

/** Removes a rule; its keyed state is dropped as its timers fire. */
export interface RuleDeletion {
  readonly ruleId: string;
  readonly deleted: true;
  readonly version?: number;
  /** Deletes the shadow version of the rule (the live one stays). */
  readonly shadow?: boolean;
}

/** One message of a rules topic: a rule version (pause = a version with state PAUSED) or a deletion. */
export type RuleMessage = Rule | RuleDeletion;

export function isRuleDeletion(message: RuleMessage): message is RuleDeletion {
  return (message as RuleDeletion).deleted === true;
}

/** Live and shadow versions of one rule id live side by side: `r` and `r#shadow` ("#" cannot occur in a rule id). */
export function ruleSlot(message: { readonly ruleId: string; readonly shadow?: boolean }): string {
  return message.shadow === true ? `${message.ruleId}#shadow` : message.ruleId;
}

/** The type of each field of the events a job's rules refer to. */
export type FieldType = 'string' | 'number' | 'boolean';
export type EventFields = Readonly<Record<string, FieldType>>;

/** What semantic validation checks a rule against: the job's event fields and its limits. */
export interface RuleLimits {
  readonly fields: EventFields;
  /** The longest window the job accepts (it bounds the keyed state a rule can hold). */
  readonly maxWindowMs: number;
}
