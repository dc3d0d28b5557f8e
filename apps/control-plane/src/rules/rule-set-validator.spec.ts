import { describe, expect, it } from 'vitest';
import { fraudRulesSchema } from '../../../../examples/fraud-detection';
import { fraudLimitsOf, validateRuleSet } from './rule-set-validator';

const rule = { ruleId: 'r1', state: 'ACTIVE', groupingKeys: ['payer'], aggregateField: 'amount', function: 'SUM', comparison: '>', limit: 10, windowMs: 1_000 };
const messages = (doc: unknown, schema: Record<string, unknown> = fraudRulesSchema(60_000)) => {
  const r = validateRuleSet(doc, schema);
  return r.ok ? [] : r.errors.map((e) => `${e.name}: ${e.reason}`);
};

describe('validateRuleSet', () => {
  it('accepts a valid fraud rule set', () => {
    expect(validateRuleSet({ rules: [rule] }, fraudRulesSchema(60_000)).ok).toBe(true);
  });

  it('names the field and the problem for the fraud job (semantic messages)', () => {
    expect(messages({ rules: [{ ...rule, comparison: '=>' }] })).toContainEqual(expect.stringMatching(/^rules\[0\]\.comparison: .*did you mean ">="/));
    expect(messages({ rules: [{ ...rule, windowMs: 120_000 }] })).toContainEqual(expect.stringMatching(/^rules\[0\]\.windowMs: .*60000/));
    expect(messages({ rules: [{ ...rule, extra: 1 }] })).toContainEqual(expect.stringMatching(/^rules\[0\]\.extra: /));
    expect(messages({ rules: [rule, rule] })).toContainEqual(expect.stringMatching(/^rules\[1\]\.ruleId: /));
  });

  it('validates any bundle with its rulesSchema alone, and requires rule ids', () => {
    const schema = { type: 'object', properties: { ruleId: { type: 'string' }, threshold: { type: 'number' } }, additionalProperties: false };
    expect(messages({ rules: [{ ruleId: 'a', threshold: 'x' }] }, schema)).toEqual(['rules[0].threshold: must be number']);
    expect(messages({ rules: [{ ruleId: 'a', other: 1 }] }, schema)).toEqual(['rules[0].other: is not a recognised field']);
    expect(messages({ rules: [{ threshold: 1 }] }, schema)).toEqual(['rules[0].ruleId: is required: a non-empty string naming the rule']);
    expect(messages({ rules: [{ ruleId: 'a' }, { ruleId: 'a' }] }, schema)).toEqual([`rules[1].ruleId: repeats rules[0]'s id "a"`]);
  });

  it('refuses documents that are not a rule set', () => {
    expect(messages([rule])).toEqual(['(root): must be a JSON object { "rules": [ ... ] }']);
    expect(messages({ rule })).toEqual(['rule: is not a recognised field; a rule set has only "rules"', 'rules: is required: an array of rules']);
    expect(messages({ rules: [] })).toEqual(['rules: must hold at least one rule (pause a rule with state PAUSED)']);
  });

  it('reads the job limits back from a fraud rules schema', () => {
    expect(fraudLimitsOf(fraudRulesSchema(5_000))).toMatchObject({ maxWindowMs: 5_000, fields: { amount: 'number', payer: 'string' } });
    expect(fraudLimitsOf({ type: 'object' })).toBeNull();
  });
});
