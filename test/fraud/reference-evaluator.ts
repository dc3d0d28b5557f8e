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

/**
 * The oracle for a run in which rule versions changed: `versionOf` says which version of the rule judged each
 * transaction (the version stamped on it when it was routed). As in the job, a rule's state is per rule id and
 * grouping-key values, shared by its versions: a transaction judged by version v is aggregated over every
 * transaction whose own version put it under the same key values (a version that groups differently starts windows
 * of its own) with a timestamp in (ts − v.windowMs, ts].
 */
export function referenceAlertsStamped(versions: ReadonlyMap<number, VersionedRule>, txs: readonly Transaction[], versionOf: (tx: Transaction) => number): Alert[] {
  const ruleOf = (tx: Transaction): VersionedRule => {
    const rule = versions.get(versionOf(tx));
    if (!rule) throw new Error(`no rule version ${versionOf(tx)} for ${tx.txId}`);
    return rule;
  };
  const byKey = new Map<string, Transaction[]>();
  const keyOf = new Map<Transaction, string>();
  for (const tx of txs) {
    const rule = ruleOf(tx);
    if (rule.state !== 'ACTIVE') continue;
    const key = groupingKeyOf(rule, tx as unknown as Record<string, unknown>);
    if (key === undefined) continue;
    keyOf.set(tx, key);
    const list = byKey.get(`${rule.ruleId}|${key}`) ?? [];
    list.push(tx);
    byKey.set(`${rule.ruleId}|${key}`, list);
  }
  const alerts: Alert[] = [];
  for (const list of byKey.values()) {
    for (const tx of list) {
      const rule = ruleOf(tx);
      const acc = new WindowAggregate(rule.function);
      for (const other of list) {
        if (other.ts <= tx.ts - rule.windowMs || other.ts > tx.ts) continue;
        const value = aggregateInput(rule, other as unknown as Record<string, unknown>);
        if (value !== undefined) acc.add(value);
      }
      const aggregate = acc.result();
      if (aggregate === undefined || !compare(rule.comparison, aggregate, rule.limit)) continue;
      const key = keyOf.get(tx)!;
      alerts.push({ alertId: `${rule.ruleId}@${rule.version}/${tx.txId}`, ruleId: rule.ruleId, ruleVersion: rule.version, key, aggregate, limit: rule.limit, txId: tx.txId, ts: tx.ts });
    }
  }
  return alerts;
}
