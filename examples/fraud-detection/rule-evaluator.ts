import { type KeyedBroadcastContext, type KeyedBroadcastProcessFunction, listState, mapState } from '@weir/engine';
import { compare, type RuleLimits, ruleSlot, type VersionedRule, WindowAggregate } from '@weir/rules';
import type { Alert, RuledTransaction } from './messages';
import { applyRuleMessage } from './rule-book';
import type { Transaction } from './transaction';

/**
 * What the window keeps of a transaction: `[ts, ...numeric fields in name order]`. Rules aggregate only numeric
 * fields, so the rest is not stored (a third of the bytes, and less to encode on every state flush).
 */
type WindowEntry = readonly number[];

export interface EvaluatorOptions {
  readonly limits: RuleLimits;
  /** Width of the timestamp buckets the window is stored in; cleanup drops whole buckets. */
  readonly bucketMs: number;
}

type Ctx = KeyedBroadcastContext<string, VersionedRule>;

/** The key's transactions, bucketed by event time (bucket start → entries). */
const windowState = mapState<WindowEntry[]>('window');
/** Transactions waiting for the watermark to pass their timestamp, with the rule version that will judge them. */
const pendingState = listState<RuledTransaction>('pending');

/**
 * Judges transactions of one (rule, key) in event-time order: a transaction waits until the watermark passes its
 * timestamp, then is judged over every transaction of the key with a timestamp in (ts − windowMs, ts] — the same
 * result whatever order the inputs arrived in, so replays and recoveries raise the same alerts. A transaction that
 * arrives behind the watermark is judged at once over what the window still holds.
 *
 * State is cleaned by event-time timers: a bucket goes once no pending transaction and no current version of the
 * rule can reach it. A deleted rule's state goes entirely.
 */
export function ruleEvaluator(options: EvaluatorOptions): KeyedBroadcastProcessFunction<string, RuledTransaction, unknown, VersionedRule, Alert> {
  const { limits, bucketMs } = options;
  const bucketOf = (ts: number) => ts - (((ts % bucketMs) + bucketMs) % bucketMs);
  const numericFields = Object.keys(limits.fields)
    .filter((f) => limits.fields[f] === 'number')
    .sort();
  const slotOf = new Map(numericFields.map((f, i) => [f, i + 1]));
  const entryOf = (tx: Transaction): WindowEntry => {
    const record = tx as unknown as Record<string, unknown>;
    return [tx.ts, ...numericFields.map((f) => (typeof record[f] === 'number' ? (record[f] as number) : NaN))];
  };

  const judge = (item: RuledTransaction, ctx: Ctx): Alert | undefined => {
    const { rule, tx } = item;
    const from = tx.ts - rule.windowMs;
    const acc = new WindowAggregate(rule.function);
    // COUNT reads slot 0 (the timestamp, always finite) and adds it like any value: count is what it uses.
    const slot = rule.function === 'COUNT' ? 0 : (slotOf.get(rule.aggregateField ?? '') ?? -1);
    if (slot < 0) return undefined;
    for (const [bucket, entries] of ctx.mapState(windowState).entries()) {
      const start = Number(bucket);
      if (start + bucketMs - 1 <= from || start > tx.ts) continue;
      for (const entry of entries) {
        const ts = entry[0];
        if (ts <= from || ts > tx.ts) continue;
        const value = entry[slot];
        if (Number.isFinite(value)) acc.add(value);
      }
    }
    const aggregate = acc.result();
    if (aggregate === undefined || !compare(rule.comparison, aggregate, rule.limit)) return undefined;
    return {
      alertId: `${ruleSlot(rule)}@${rule.version}/${tx.txId}`,
      ruleId: rule.ruleId,
      ruleVersion: rule.version,
      key: item.key,
      aggregate,
      limit: rule.limit,
      txId: tx.txId,
      ts: tx.ts,
      ...(rule.shadow ? { shadow: true as const } : {}),
    };
  };

  return {
    states: [windowState, pendingState],

    processElement(item, ctx, out) {
      const { tx, rule } = item;
      const window = ctx.mapState(windowState);
      const bucket = bucketOf(tx.ts);
      const entries = window.get(String(bucket));
      window.put(String(bucket), entries ? [...entries, entryOf(tx)] : [entryOf(tx)]);
      // One cleanup timer per bucket; a later version with a longer window is honoured when it fires (prune).
      if (!entries) ctx.timers.registerEventTimeTimer(bucket + bucketMs - 1 + rule.windowMs);
      if (tx.ts <= ctx.timers.currentWatermark) {
        const alert = judge(item, ctx);
        if (alert) out.collect(alert, tx.ts);
        return;
      }
      // One evaluation timer per key is enough: at the earliest pending timestamp (onTimer judges all that is due).
      const pending = ctx.listState(pendingState);
      let earliest = Infinity;
      for (const p of pending.get()) if (p.tx.ts < earliest) earliest = p.tx.ts;
      pending.add(item);
      if (tx.ts < earliest) ctx.timers.registerEventTimeTimer(tx.ts);
    },

    onTimer(timestamp, _domain, ctx, out) {
      // Everything at or behind the watermark is complete: judge it all now, not one timer at a time.
      const now = Math.max(timestamp, ctx.timers.currentWatermark);
      const pending = ctx.listState(pendingState);
      const all = pending.get();
      const due = all.filter((p) => p.tx.ts <= now);
      if (due.length > 0) {
        due.sort((a, b) => a.tx.ts - b.tx.ts || (a.tx.txId < b.tx.txId ? -1 : a.tx.txId > b.tx.txId ? 1 : 0));
        for (const item of due) {
          const alert = judge(item, ctx);
          if (alert) out.collect(alert, item.tx.ts);
        }
        const rest = all.filter((p) => p.tx.ts > now);
        if (rest.length > 0) {
          pending.update(rest);
          let earliest = Infinity;
          for (const p of rest) if (p.tx.ts < earliest) earliest = p.tx.ts;
          ctx.timers.registerEventTimeTimer(earliest);
        } else {
          pending.clear();
        }
      }
      prune(now, ctx);
    },

    processBroadcastElement(value, ctx) {
      // The evaluator's copy of the rules only decides how long state is kept; judging uses the stamped version.
      applyRuleMessage(value, ctx.broadcastState, limits);
    },
  };

  function prune(now: number, ctx: Ctx): void {
    let keepMs = ctx.broadcastState.get(ruleSlotOfKey(ctx.key))?.windowMs ?? 0;
    for (const p of ctx.listState(pendingState).get()) keepMs = Math.max(keepMs, p.rule.windowMs);
    const cutoff = now - keepMs;
    const window = ctx.mapState(windowState);
    let oldest = Infinity;
    for (const [bucket] of window.entries()) {
      const start = Number(bucket);
      if (start + bucketMs - 1 <= cutoff) window.remove(bucket);
      else if (start < oldest) oldest = start;
    }
    // A window that grew since this bucket's timer was set keeps the bucket: look again when the new window passes it.
    if (oldest !== Infinity) ctx.timers.registerEventTimeTimer(Math.max(oldest + bucketMs - 1 + keepMs, now + 1));
  }
}

/**
 * Evaluator keys are `${slot}|${groupingKey}` (slot: the rule id, or `id#shadow`), so a shadow version keeps state
 * of its own; rule ids cannot contain "|" or "#".
 */
export function evaluatorKey(item: RuledTransaction): string {
  return `${ruleSlot(item.rule)}|${item.key}`;
}

function ruleSlotOfKey(key: string): string {
  return key.slice(0, key.indexOf('|'));
}
