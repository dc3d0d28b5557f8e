import { AGGREGATE_FUNCTIONS, COMPARISON_SYMBOLS, RULE_STATES, type RuleLimits } from './rule';

export const RULE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * The JSON Schema of one rule, independent of any job: structure, types and vocabularies. What it cannot say
 * (fields of the job's events, the job's window limit) is checked by validateRule, or baked into the schema a bundle
 * declares by rulesSchemaFor().
 */
export const ruleJsonSchema = Object.freeze({
  $schema: SCHEMA_DIALECT,
  title: 'Weir fraud rule',
  type: 'object',
  additionalProperties: false,
  required: ['ruleId', 'state', 'groupingKeys', 'function', 'comparison', 'limit', 'windowMs'],
  properties: {
    ruleId: { type: 'string', pattern: RULE_ID_PATTERN },
    version: { type: 'integer', minimum: 1 },
    state: { enum: [...RULE_STATES] },
    groupingKeys: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, uniqueItems: true },
    aggregateField: { type: 'string', minLength: 1 },
    function: { enum: [...AGGREGATE_FUNCTIONS] },
    comparison: { enum: [...COMPARISON_SYMBOLS] },
    limit: { type: 'number' },
    windowMs: { type: 'integer', minimum: 1 },
    shadow: { type: 'boolean' },
  },
});

/**
 * The schema a bundle's manifest declares as `rulesSchema` for a job with these limits: the base schema with the
 * event's field names, its numeric fields and the window limit written in, so a generic JSON Schema validator (the
 * control plane's) rejects what validateRule rejects, if with plainer messages.
 */
export function rulesSchemaFor(limits: RuleLimits): Record<string, unknown> {
  const names = Object.keys(limits.fields).sort();
  const numeric = names.filter((name) => limits.fields[name] === 'number');
  const base = ruleJsonSchema.properties;
  return {
    ...ruleJsonSchema,
    properties: {
      ...base,
      groupingKeys: { ...base.groupingKeys, items: { enum: names } },
      aggregateField: { enum: numeric },
      windowMs: { ...base.windowMs, maximum: limits.maxWindowMs },
    },
    // SUM, AVG, MIN and MAX need a field to aggregate; COUNT does not.
    if: { properties: { function: { not: { const: 'COUNT' } } }, required: ['function'] },
    then: { properties: { aggregateField: { enum: numeric } }, required: ['aggregateField'] },
  };
}
