import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import type { RuleLimits } from './rule';
import { ruleJsonSchema, rulesSchemaFor } from './rules-schema';
import { formatProblem, RuleValidationError, assertValidRule, validateRule, validateRules } from './validate-rule';
import { validateRuleMessage } from './rule-message';
import { eventFieldsFromJsonSchema } from './event-fields';

const limits: RuleLimits = {
  fields: { txId: 'string', ts: 'number', payer: 'string', beneficiary: 'string', card: 'string', merchant: 'string', amount: 'number' },
  maxWindowMs: 3_600_000,
};

const valid = {
  ruleId: 'big-spender',
  version: 3,
  state: 'ACTIVE',
  groupingKeys: ['payer', 'beneficiary'],
  aggregateField: 'amount',
  function: 'SUM',
  comparison: '>=',
  limit: 1_000,
  windowMs: 60_000,
};

const messagesOf = (value: unknown, path?: string) => {
  const result = validateRule(value, limits, path);
  return result.ok ? [] : result.problems.map(formatProblem);
};

describe('validateRule', () => {
  it('accepts a well-formed rule, and COUNT without a field', () => {
    expect(validateRule(valid, limits)).toEqual({ ok: true, rule: valid });
    const { aggregateField: _unused, ...count } = { ...valid, function: 'COUNT', comparison: '>', limit: 5 };
    expect(messagesOf(count)).toEqual([]);
  });

  it.each([['>'], ['>='], ['<'], ['<='], ['='], ['!=']])('accepts the operator %s', (comparison) => {
    expect(messagesOf({ ...valid, comparison })).toEqual([]);
  });

  it('names an unknown operator, lists the valid ones and suggests the meant one', () => {
    expect(messagesOf([{ ...valid, comparison: '=>' }][0], 'rules[0]')).toEqual([
      'rules[0].comparison: unknown operator "=>"; use one of >, >=, <, <=, =, != (did you mean ">="?)',
    ]);
    expect(messagesOf({ ...valid, comparison: 'gt' })).toEqual(['rule.comparison: unknown operator "gt"; use one of >, >=, <, <=, =, !=']);
  });

  it('names unknown fields against the event fields', () => {
    expect(messagesOf({ ...valid, groupingKeys: ['payer', 'iban'], aggregateField: 'amout' })).toEqual([
      'rule.groupingKeys[1]: unknown field "iban"; the events have amount, beneficiary, card, merchant, payer, ts, txId',
      'rule.aggregateField: unknown field "amout"; numeric fields are amount, ts',
    ]);
  });

  it('refuses a non-numeric aggregate field and a missing one for SUM', () => {
    expect(messagesOf({ ...valid, aggregateField: 'merchant' })).toEqual([
      'rule.aggregateField: "merchant" is a string field; SUM needs a numeric one: amount, ts',
    ]);
    const { aggregateField: _unused, ...noField } = { ...valid, function: 'MAX' };
    expect(messagesOf(noField)).toEqual(['rule.aggregateField: is required for MAX (only COUNT needs no field); numeric fields are amount, ts']);
  });

  it('refuses a window longer than the job allows', () => {
    expect(messagesOf({ ...valid, windowMs: 7_200_000 })).toEqual(["rule.windowMs: 7200000 ms is longer than this job's limit of 3600000 ms"]);
  });

  it('refuses empty and duplicated grouping keys', () => {
    expect(messagesOf({ ...valid, groupingKeys: [] })).toEqual(['rule.groupingKeys: must name at least one field to group by']);
    expect(messagesOf({ ...valid, groupingKeys: ['payer', 'card', 'payer'] })).toEqual(['rule.groupingKeys: lists "payer" twice']);
  });

  it('reports structure problems with their paths: missing, unknown, mistyped, bad enums', () => {
    const { limit: _unused, ...noLimit } = valid;
    expect(messagesOf({ ...noLimit, windowMS: 5, state: 'ON', function: 'MEDIAN', windowMs: '60s', version: 0 }).sort()).toEqual(
      [
        'rule.limit: is required',
        'rule.windowMS: unknown property; a rule has ruleId, version, state, groupingKeys, aggregateField, function, comparison, limit, windowMs, shadow',
        'rule.state: unknown state "ON"; use ACTIVE or PAUSED',
        'rule.function: unknown function "MEDIAN"; use one of SUM, AVG, MIN, MAX, COUNT',
        'rule.windowMs: must be an integer, got the string "60s"',
        'rule.version: must be >= 1',
      ].sort(),
    );
    expect(messagesOf({ ...valid, ruleId: '-x' })[0]).toMatch(/^rule\.ruleId: "-x" is not a valid id/);
    expect(messagesOf(42)).toEqual(['rule: must be an object, got number 42']);
  });

  it('assertValidRule throws a typed error carrying every problem', () => {
    expect(() => assertValidRule({ ...valid, comparison: '≥', windowMs: 7_200_000 }, limits)).toThrow(RuleValidationError);
    try {
      assertValidRule({ ...valid, comparison: '≥' }, limits);
    } catch (err) {
      expect((err as RuleValidationError).problems).toHaveLength(1);
      expect((err as Error).message).toContain('did you mean ">="');
    }
  });
});

describe('validateRules', () => {
  it('indexes problems and refuses a rule id used twice', () => {
    const result = validateRules([valid, { ...valid, comparison: '=>' }, valid], limits);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
      'rules[1].comparison: unknown operator "=>"; use one of >, >=, <, <=, =, != (did you mean ">="?)',
      'rules[1].ruleId: "big-spender" is already used by rules[0]',
      'rules[2].ruleId: "big-spender" is already used by rules[0]',
    ]);
  });
});

describe('validateRuleMessage', () => {
  it('accepts a deletion and checks its shape', () => {
    expect(validateRuleMessage({ ruleId: 'r1', deleted: true }, limits)).toEqual({ ok: true, message: { ruleId: 'r1', deleted: true } });
    const bad = validateRuleMessage({ deleted: 'yes', extra: 1 }, limits);
    expect(bad.ok ? [] : bad.problems.map(formatProblem)).toEqual([
      'rule.deleted: must be true (a deletion) or absent (a rule version)',
      'rule.ruleId: is required: the id of the rule to delete',
      'rule.extra: unknown property; a deletion has ruleId, deleted, version, shadow',
    ]);
  });
});

describe('rulesSchemaFor', () => {
  const ajv = new Ajv2020({ strict: true });
  const check = ajv.compile(rulesSchemaFor(limits));

  it('is a usable JSON Schema that a generic validator applies with the job limits written in', () => {
    expect(check(valid)).toBe(true);
    expect(check({ ...valid, groupingKeys: ['iban'] })).toBe(false);
    expect(check({ ...valid, aggregateField: 'merchant' })).toBe(false);
    expect(check({ ...valid, windowMs: 7_200_000 })).toBe(false);
    const { aggregateField: _unused, ...noField } = valid;
    expect(check(noField)).toBe(false);
    expect(check({ ...noField, function: 'COUNT' })).toBe(true);
  });

  it('keeps the base schema job-independent', () => {
    expect(new Ajv2020({ strict: true }).compile(ruleJsonSchema)({ ...valid, groupingKeys: ['iban'] })).toBe(true);
  });
});

describe('eventFieldsFromJsonSchema', () => {
  it('reads top-level scalar properties', () => {
    const fields = eventFieldsFromJsonSchema({
      type: 'object',
      properties: { amount: { type: 'number' }, n: { type: 'integer' }, payer: { type: 'string' }, vip: { type: 'boolean' }, tags: { type: 'array' } },
    });
    expect(fields).toEqual({ amount: 'number', n: 'number', payer: 'string', vip: 'boolean' });
    expect(() => eventFieldsFromJsonSchema({ type: 'object' })).toThrow(/properties/);
  });
});
