/**
 * The demo's independent reference: rule semantics written the plain way (no @weir/rules evaluation code, no engine).
 * For a rule and a transaction at `ts`: the aggregate over the same key's transactions with timestamps in
 * (ts − windowMs, ts], the transaction itself included; an alert when `aggregate <comparison> limit` holds.
 */
import type { Transaction } from '@weir/datagen';
import type { Rule } from '@weir/rules';

export type DemoRule = Rule;

/** The grouping key as the job writes it in alerts: the values in the rule's order, JSON-encoded. */
export const keyOf = (rule: DemoRule, tx: Transaction): string => JSON.stringify(rule.groupingKeys.map((f) => tx[f as keyof Transaction]));

/** txId → the rule's aggregate for that transaction (sliding window per key, two pointers over ts order). */
export function windowAggregates(rule: DemoRule, txs: readonly Transaction[]): Map<string, number> {
  const byKey = new Map<string, Transaction[]>();
  for (const tx of txs) {
    const key = keyOf(rule, tx);
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(tx);
  }
  const out = new Map<string, number>();
  const value = (tx: Transaction) => (rule.function === 'COUNT' ? 1 : (tx[rule.aggregateField as keyof Transaction] as number));
  for (const list of byKey.values()) {
    list.sort((a, b) => a.ts - b.ts);
    // Transactions sharing a timestamp are all inside each other's window: take the window at the group's end.
    let lo = 0;
    for (let i = 0; i < list.length; ) {
      let end = i;
      while (end + 1 < list.length && list[end + 1].ts === list[i].ts) end++;
      while (list[lo].ts <= list[i].ts - rule.windowMs) lo++;
      const inWindow = list.slice(lo, end + 1).map(value);
      const aggregate = aggregateOf(rule.function, inWindow);
      for (let j = i; j <= end; j++) out.set(list[j].txId, aggregate);
      i = end + 1;
    }
  }
  return out;
}

function aggregateOf(fn: Rule['function'], values: number[]): number {
  switch (fn) {
    case 'COUNT':
      return values.length;
    case 'SUM':
      return values.reduce((a, b) => a + b, 0);
    case 'AVG':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'MIN':
      return Math.min(...values);
    case 'MAX':
      return Math.max(...values);
  }
}

export function holds(rule: Pick<Rule, 'comparison' | 'limit'>, aggregate: number): boolean {
  switch (rule.comparison) {
    case '>':
      return aggregate > rule.limit;
    case '>=':
      return aggregate >= rule.limit;
    case '<':
      return aggregate < rule.limit;
    case '<=':
      return aggregate <= rule.limit;
    case '=':
      return aggregate === rule.limit;
    case '!=':
      return aggregate !== rule.limit;
  }
}
