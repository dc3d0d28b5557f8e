import { type KeyedBroadcastContext, type KeyedBroadcastProcessFunction, mapState, valueState } from '@weir/engine';
import { compare, type RuleLimits, ruleSlot, type VersionedRule, WindowAggregate } from '@weir/rules';
import type { Alert, RuledTransaction } from './messages';
import { addPending, earliestPending, longestPendingWindow, pendingOf, type PendingJudgements, takeDue } from './pending-judgements';
import { applyRuleMessage } from './rule-book';
import type { Transaction } from './transaction';
import { addBucketTotals, BucketAggregates } from './window-totals';

/**
 * One bucket of the window: its transactions flattened, `stride` numbers each — `[ts, ...numeric fields in name
 * order]`. Rules aggregate only numeric fields, so the rest is not stored. Flat (not an array per transaction): one
 * array to append to in place, and far less to encode on every state flush and to collect.
 */
type BucketEntries = number[];

export interface EvaluatorOptions {
  readonly limits: RuleLimits;
  /** Width of the timestamp buckets the window is stored in; cleanup drops whole buckets. */
  readonly bucketMs: number;
}

type Ctx = KeyedBroadcastContext<string, VersionedRule>;

/** The key's transactions, bucketed by event time (bucket start → entries). */
const windowState = mapState<BucketEntries>('window');
/** Transactions waiting for the watermark to pass their timestamp, with the rule version that will judge them. */
const pendingState = valueState<PendingJudgements | RuledTransaction[]>('pending');

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
  const stride = numericFields.length + 1;
  const aggregates = new BucketAggregates(stride);
  const append = (entries: BucketEntries, tx: Transaction): void => {
    const record = tx as unknown as Record<string, unknown>;
    entries.push(tx.ts);
    for (const f of numericFields) entries.push(typeof record[f] === 'number' ? (record[f] as number) : NaN);
  };
  /** Buckets written before entries were flat (an array per transaction) are flattened when first met. */
  const bucketsOf = (ctx: Ctx): [string, BucketEntries][] => {
    const window = ctx.mapState(windowState);
    const buckets = window.entries();
    for (const pair of buckets) {
      if (pair[1].length > 0 && Array.isArray(pair[1][0])) {
        pair[1] = (pair[1] as unknown as number[][]).flat();
        window.put(pair[0], pair[1]);
      }
    }
    return buckets;
  };

  const judge = (rule: VersionedRule, tx: { readonly ts: number; readonly txId: string }, ctx: Ctx): Alert | undefined => {
    const from = tx.ts - rule.windowMs;
    const acc = new WindowAggregate(rule.function);
    // COUNT reads slot 0 (the timestamp, always finite) and adds it like any value: count is what it uses.
    const slot = rule.function === 'COUNT' ? 0 : (slotOf.get(rule.aggregateField ?? '') ?? -1);
    if (slot < 0) return undefined;
    for (const [bucket, entries] of bucketsOf(ctx)) {
      const start = Number(bucket);
      const end = start + bucketMs - 1;
      if (end <= from || start > tx.ts) continue;
      // A bucket wholly inside (from, ts] counts by its totals; only the buckets the window's edges cut are scanned.
      if (start > from && end <= tx.ts) {
        addBucketTotals(acc, aggregates.of(entries), slot);
        continue;
      }
      for (let i = 0; i + stride <= entries.length; i += stride) {
        const ts = entries[i];
        if (ts <= from || ts > tx.ts) continue;
        const value = entries[i + slot];
        if (Number.isFinite(value)) acc.add(value);
      }
    }
    const aggregate = acc.result();
    if (aggregate === undefined || !compare(rule.comparison, aggregate, rule.limit)) return undefined;
    return {
      alertId: `${ruleSlot(rule)}@${rule.version}/${tx.txId}`,
      ruleId: rule.ruleId,
      ruleVersion: rule.version,
      key: groupingKeyOfKey(ctx.key),
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
      const { tx } = item;
      const window = ctx.mapState(windowState);
      const bucket = String(bucketOf(tx.ts));
      const existing = window.get(bucket);
      // Appended in place (the state holds this very array; put marks it for the next flush): no copy per record.
      const entries = existing ?? [];
      append(entries, tx);
      window.put(bucket, entries);
      if (tx.ts <= ctx.timers.currentWatermark) {
        // A new bucket needs a cleanup timer; a later version with a longer window is honoured when it fires (prune).
        if (!existing) ctx.timers.registerEventTimeTimer(bucketOf(tx.ts) + bucketMs - 1 + item.rule.windowMs);
        const alert = judge(item.rule, tx, ctx);
        if (alert) out.collect(alert, tx.ts);
        return;
      }
      // One evaluation timer per key is enough: at the earliest pending timestamp (onTimer judges all that is due).
      // It also stands for the cleanup timer: when it fires, prune() sets the next one for the oldest bucket left.
      const state = ctx.state(pendingState);
      const pending = pendingOf(state.value());
      const earliest = earliestPending(pending);
      addPending(pending, tx.ts, tx.txId, item.rule);
      state.update(pending);
      if (tx.ts < earliest) ctx.timers.registerEventTimeTimer(tx.ts);
    },

    onTimer(timestamp, _domain, ctx, out) {
      // Everything at or behind the watermark is complete: judge it all now, not one timer at a time.
      const now = Math.max(timestamp, ctx.timers.currentWatermark);
      const state = ctx.state(pendingState);
      const stored = state.value();
      let rest: PendingJudgements | undefined;
      if (stored !== undefined) {
        const split = takeDue(pendingOf(stored), now);
        rest = split.rest;
        if (split.due.length > 0) {
          for (const item of split.due) {
            const alert = judge(item.rule, item, ctx);
            if (alert) out.collect(alert, item.ts);
          }
          if (rest) {
            state.update(rest);
            ctx.timers.registerEventTimeTimer(earliestPending(rest));
          } else {
            state.clear();
          }
        }
      }
      prune(now, rest, ctx);
    },

    processBroadcastElement(value, ctx) {
      // The evaluator's copy of the rules only decides how long state is kept; judging uses the stamped version.
      applyRuleMessage(value, ctx.broadcastState, limits);
    },
  };

  function prune(now: number, pending: PendingJudgements | undefined, ctx: Ctx): void {
    let keepMs = ctx.broadcastState.get(ruleSlotOfKey(ctx.key))?.windowMs ?? 0;
    if (pending) keepMs = Math.max(keepMs, longestPendingWindow(pending));
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

function groupingKeyOfKey(key: string): string {
  return key.slice(key.indexOf('|') + 1);
}
