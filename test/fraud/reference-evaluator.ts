import { aggregateInput, compare, groupingKeyOf, type VersionedRule, WindowAggregate } from '@weir/rules';
import type { Alert, Transaction } from '../../examples/fraud-detection';

/**
 * The oracle: the rule semantics written the plain way. For every rule and transaction, the aggregate over all
 * transactions with the same grouping key and a timestamp in (ts − windowMs, ts]; an alert when the comparison holds.
 */
export function referenceAlerts(rules: readonly VersionedRule[], txs: readonly Transaction[]): Alert[] {
  const alerts: Alert[] = [];
  for (const rule of rules) {
    if (rule.state !== 'ACTIVE') continue;
    const byKey = new Map<string, Transaction[]>();
    for (const tx of txs) {
      const key = groupingKeyOf(rule, tx as unknown as Record<string, unknown>);
      if (key === undefined) continue;
      const list = byKey.get(key) ?? [];
      list.push(tx);
      byKey.set(key, list);
    }
    for (const [key, list] of byKey) {
      for (const tx of list) {
        const acc = new WindowAggregate(rule.function);
        for (const other of list) {
          if (other.ts > tx.ts - rule.windowMs && other.ts <= tx.ts) {
            const value = aggregateInput(rule, other as unknown as Record<string, unknown>);
            if (value !== undefined) acc.add(value);
          }
        }
        const aggregate = acc.result();
        if (aggregate !== undefined && compare(rule.comparison, aggregate, rule.limit)) {
          alerts.push({ alertId: `${rule.ruleId}@${rule.version}/${tx.txId}`, ruleId: rule.ruleId, ruleVersion: rule.version, key, aggregate, limit: rule.limit, txId: tx.txId, ts: tx.ts });
        }
      }
    }
  }
  return alerts;
}
