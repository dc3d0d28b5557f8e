/**
 * Exact verification of the alerts a live rule change produced, with no timing in it. Versions 1 and 2 of each
 * rule share grouping keys, function, field and window (only the comparison or limit changes), so each
 * transaction's aggregate does not depend on which version judged its neighbours; what the swap decides is only
 * which version judged each transaction. A routing subtask applies version 2 at one point of its input, so on each
 * input channel (source partition → routing subtask), in offset order, version 1 judges a prefix and version 2 the
 * rest. The switch point of each (rule, channel) is taken from the routing subtask's acknowledgement when it names
 * its input position, else found as the one cut (if any) that explains the alerts. The alerts must then equal the
 * reference exactly: the same set of (rule, version, transaction), each once, with the same key and aggregate.
 */
import type { Transaction } from '@weir/datagen';
import type { Alert } from '../../examples/fraud-detection';
import { type DemoRule, holds, keyOf, windowAggregates } from './fraud-oracle';

export interface SentTransaction {
  readonly tx: Transaction;
  readonly partition: number;
  readonly offset: bigint;
  /** The routing subtask that owns its txId. */
  readonly router: number;
}

export interface Verification {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly expected: number;
  /** Per rule id: how the switch points were settled. */
  readonly switchPoints: ReadonlyMap<string, { fromAcks: number; inferred: number }>;
}

export interface SwitchFromAcks {
  /** rule id → routing subtask → `topic:partition` → the offset from which version 2 applied. */
  readonly positions: ReadonlyMap<string, ReadonlyMap<number, Readonly<Record<string, string>>>>;
  readonly topic: string;
}

export interface RuleChange {
  readonly v1: DemoRule;
  readonly v2: DemoRule;
}

/** The reference aggregates, computed once (they do not depend on the switch points). */
export interface Reference {
  readonly sent: readonly SentTransaction[];
  readonly changes: readonly { readonly v1: DemoRule; readonly v2: DemoRule; readonly aggregates: ReadonlyMap<string, number> }[];
}

export function reference(sent: readonly SentTransaction[], changes: readonly RuleChange[]): Reference {
  for (const { v1, v2 } of changes) {
    const same = (r: DemoRule) => JSON.stringify([r.ruleId, r.groupingKeys, r.function, r.aggregateField, r.windowMs, r.state]);
    if (same(v1) !== same(v2)) throw new Error(`rule ${v1.ruleId}: versions 1 and 2 may differ only in comparison and limit for this check`);
  }
  const txs = sent.map((s) => s.tx);
  return { sent, changes: changes.map((c) => ({ ...c, aggregates: windowAggregates(c.v1, txs) })) };
}

export function verifyAlerts(ref: Reference, alerts: readonly Alert[], acks: SwitchFromAcks): Verification {
  const { sent } = ref;
  const problems: string[] = [];
  const observed = new Map<string, Alert>();
  for (const a of alerts) {
    if (observed.has(a.alertId)) problems.push(`duplicate alert ${a.alertId}`);
    observed.set(a.alertId, a);
  }
  const channels = new Map<string, SentTransaction[]>();
  for (const s of sent) {
    const id = `${s.partition}→${s.router}`;
    let list = channels.get(id);
    if (!list) channels.set(id, (list = []));
    list.push(s);
  }
  for (const list of channels.values()) list.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));

  const expectedIds = new Set<string>();
  const switchPoints = new Map<string, { fromAcks: number; inferred: number }>();
  for (const { v1, v2, aggregates } of ref.changes) {
    const idOf = (rule: DemoRule, tx: Transaction) => `${rule.ruleId}@${rule.version}/${tx.txId}`;
    // Whether the transaction's alerts under version v are what that version would raise (and none of the other's).
    const fits = (s: SentTransaction, mine: DemoRule, other: DemoRule) =>
      observed.has(idOf(mine, s.tx)) === holds(mine, aggregates.get(s.tx.txId)!) && !observed.has(idOf(other, s.tx));
    const points = { fromAcks: 0, inferred: 0 };
    for (const [channel, list] of channels) {
      // ok1[k]: the first k transactions fit version 1; ok2[k]: the rest fit version 2.
      const ok1 = [true];
      for (let i = 0; i < list.length; i++) ok1.push(ok1[i] && fits(list[i], v1, v2));
      const ok2 = new Array<boolean>(list.length + 1).fill(true);
      for (let i = list.length - 1; i >= 0; i--) ok2[i] = ok2[i + 1] && fits(list[i], v2, v1);
      const fromAck = acks.positions.get(v2.ruleId)?.get(list[0]?.router ?? -1);
      let cut: number;
      if (fromAck) {
        const position = fromAck[`${acks.topic}:${list[0].partition}`];
        cut = position === undefined ? 0 : list.filter((s) => s.offset < BigInt(position)).length;
        points.fromAcks++;
      } else {
        cut = ok1.findIndex((ok, k) => ok && ok2[k]);
        points.inferred++;
      }
      if (cut < 0 || !(ok1[cut] && ok2[cut])) {
        const first1 = ok1.indexOf(false) - 1;
        const last2 = ok2.lastIndexOf(false);
        problems.push(
          `rule ${v1.ruleId}, channel ${channel}: ${fromAck ? `the alerts do not fit the switch at transaction ${cut} that the acks name` : 'no single switch from version 1 to 2 explains the alerts'}` +
            ` (version 1 fits up to transaction ${first1}, version 2 from ${last2 + 1}, of ${list.length})`,
        );
        cut = Math.max(0, first1);
      }
      list.forEach((s, i) => {
        const rule = i < cut ? v1 : v2;
        if (!holds(rule, aggregates.get(s.tx.txId)!)) return;
        const id = idOf(rule, s.tx);
        expectedIds.add(id);
        const got = observed.get(id);
        if (!got) return;
        if (got.key !== keyOf(rule, s.tx) || got.aggregate !== aggregates.get(s.tx.txId) || got.limit !== rule.limit || got.ts !== s.tx.ts) {
          problems.push(`alert ${id}: got key ${got.key} aggregate ${got.aggregate} limit ${got.limit}, expected ${keyOf(rule, s.tx)} ${aggregates.get(s.tx.txId)} ${rule.limit}`);
        }
      });
    }
    switchPoints.set(v1.ruleId, points);
  }
  const missing = [...expectedIds].filter((id) => !observed.has(id));
  const unexpected = [...observed.keys()].filter((id) => !expectedIds.has(id));
  if (missing.length > 0) problems.push(`${missing.length} expected alerts missing, e.g. ${missing.slice(0, 3).join(', ')}`);
  if (unexpected.length > 0) problems.push(`${unexpected.length} alerts not expected, e.g. ${unexpected.slice(0, 3).join(', ')}`);
  return { ok: problems.length === 0, problems, expected: expectedIds.size, switchPoints };
}
