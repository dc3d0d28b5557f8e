import { describe, expect, it } from 'vitest';
import { aggregateInput, compare, groupingKeyOf, WindowAggregate } from './evaluate';

describe('compare', () => {
  it.each([
    ['>', 5, 4, true], ['>', 4, 4, false],
    ['>=', 4, 4, true], ['>=', 3, 4, false],
    ['<', 3, 4, true], ['<', 4, 4, false],
    ['<=', 4, 4, true], ['<=', 5, 4, false],
    ['=', 4, 4, true], ['=', 5, 4, false],
    ['!=', 5, 4, true], ['!=', 4, 4, false],
  ] as const)('%s: %d vs %d is %s', (op, a, b, expected) => {
    expect(compare(op, a, b)).toBe(expected);
  });
});

describe('WindowAggregate', () => {
  const over = (fn: 'SUM' | 'AVG' | 'MIN' | 'MAX' | 'COUNT', values: number[]) => {
    const agg = new WindowAggregate(fn);
    for (const v of values) agg.add(v);
    return agg.result();
  };
  it('computes each function', () => {
    expect(over('SUM', [3, 1, 2])).toBe(6);
    expect(over('AVG', [3, 1, 2])).toBe(2);
    expect(over('MIN', [3, 1, 2])).toBe(1);
    expect(over('MAX', [3, 1, 2])).toBe(3);
    expect(over('COUNT', [1, 1, 1])).toBe(3);
  });
  it('has no value for an empty window except COUNT', () => {
    expect(over('SUM', [])).toBeUndefined();
    expect(over('COUNT', [])).toBe(0);
  });
});

describe('groupingKeyOf and aggregateInput', () => {
  const tx = { payer: 'p|1', card: 'c1', amount: 12 };
  it('encodes values unambiguously in the rule order', () => {
    expect(groupingKeyOf({ groupingKeys: ['payer', 'card'] }, tx)).toBe('["p|1","c1"]');
    expect(groupingKeyOf({ groupingKeys: ['card', 'payer'] }, tx)).toBe('["c1","p|1"]');
    expect(groupingKeyOf({ groupingKeys: ['merchant'] }, tx)).toBeUndefined();
  });
  it('reads the aggregate field, or 1 for COUNT', () => {
    expect(aggregateInput({ function: 'SUM', aggregateField: 'amount' }, tx)).toBe(12);
    expect(aggregateInput({ function: 'COUNT' }, tx)).toBe(1);
    expect(aggregateInput({ function: 'MAX', aggregateField: 'card' }, tx)).toBeUndefined();
  });
});
