import { describe, expect, it } from 'vitest';
import { type VersionedRule, WindowAggregate } from '@weir/rules';
import type { RuledTransaction } from './messages';
import { addPending, earliestPending, longestPendingWindow, pendingCount, pendingOf, takeDue } from './pending-judgements';
import { addBucketTotals, BucketAggregates } from './window-totals';

const rule = (version: number, windowMs = 1_000): VersionedRule => ({
  ruleId: 'r', version, state: 'ACTIVE', groupingKeys: ['payer'], aggregateField: 'amount', function: 'SUM', comparison: '>', limit: 1, windowMs,
});

describe('pending judgements', () => {
  it('stores each rule version once (equal copies too) and hands what is due back in (ts, txId) order', () => {
    const pending = pendingOf(undefined);
    addPending(pending, 30, 'b', rule(1));
    addPending(pending, 10, 'z', { ...rule(1) });
    addPending(pending, 30, 'a', rule(2, 5_000));
    addPending(pending, 50, 'c', rule(1));
    expect(pending.r).toHaveLength(2);
    expect(pendingCount(pending)).toBe(4);
    expect(earliestPending(pending)).toBe(10);
    expect(longestPendingWindow(pending)).toBe(5_000);
    const { due, rest } = takeDue(pending, 30);
    expect(due.map((d) => [d.ts, d.txId, d.rule.version])).toEqual([[10, 'z', 1], [30, 'a', 2], [30, 'b', 1]]);
    expect(rest && pendingCount(rest)).toBe(1);
    expect(takeDue(rest!, 50).rest).toBeUndefined();
  });

  it('reads the earlier layout (a list of routed transactions)', () => {
    const tx = (txId: string, ts: number) => ({ txId, ts, payer: 'p', beneficiary: 'b', card: 'c', merchant: 'm', amount: 1 });
    const legacy: RuledTransaction[] = [
      { type: 'ruled', rule: rule(1), key: '["p"]', tx: tx('t1', 5) },
      { type: 'ruled', rule: rule(1), key: '["p"]', tx: tx('t2', 3) },
    ];
    const pending = pendingOf(legacy);
    expect(pending.r).toHaveLength(1);
    expect(takeDue(pending, 10).due.map((d) => d.txId)).toEqual(['t2', 't1']);
  });
});

describe('bucket totals', () => {
  it('extend as the bucket grows in place and merge like value-by-value aggregation', () => {
    const aggregates = new BucketAggregates(2);
    const entries = [1, 10, 2, NaN];
    expect(Array.from(aggregates.of(entries).slice(4))).toEqual([1, 10, 10, 10]);
    entries.push(3, -4);
    const totals = aggregates.of(entries);
    for (const fn of ['SUM', 'AVG', 'MIN', 'MAX', 'COUNT'] as const) {
      const merged = new WindowAggregate(fn);
      addBucketTotals(merged, totals, 1);
      const direct = new WindowAggregate(fn);
      for (const v of [10, -4]) direct.add(v);
      expect(merged.result()).toBe(direct.result());
    }
    const count = new WindowAggregate('COUNT');
    addBucketTotals(count, totals, 0);
    expect(count.result()).toBe(3);
    expect(new WindowAggregate('SUM').result()).toBeUndefined();
  });
});
