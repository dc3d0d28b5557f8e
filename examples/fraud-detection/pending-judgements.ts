import type { VersionedRule } from '@weir/rules';
import type { RuledTransaction } from './messages';

/**
 * The transactions of one evaluator key waiting for the watermark, as stored: each rule version once (`r`), then
 * `[ts, txId, index into r]` per transaction (`e`, flat). The key's transactions nearly always carry the same
 * version, so this is a few numbers per transaction instead of the transaction and its rule, which every state
 * flush would encode again. The window holds the transactions' values; the key is the evaluator's.
 */
export interface PendingJudgements {
  readonly r: VersionedRule[];
  readonly e: (number | string)[];
}

export interface PendingItem {
  readonly ts: number;
  readonly txId: string;
  readonly rule: VersionedRule;
}

const STRIDE = 3;

/** The stored value, or an empty one; a list of RuledTransaction (the layout before this one) is converted. */
export function pendingOf(stored: PendingJudgements | readonly RuledTransaction[] | undefined): PendingJudgements {
  if (stored === undefined) return { r: [], e: [] };
  if (!Array.isArray(stored)) return stored as PendingJudgements;
  const pending: PendingJudgements = { r: [], e: [] };
  for (const item of stored as readonly RuledTransaction[]) addPending(pending, item.tx.ts, item.tx.txId, item.rule);
  return pending;
}

/** Appends in place. */
export function addPending(pending: PendingJudgements, ts: number, txId: string, rule: VersionedRule): void {
  let index = pending.r.length - 1;
  while (index >= 0 && pending.r[index] !== rule && !sameRule(pending.r[index], rule)) index--;
  if (index < 0) index = pending.r.push(rule) - 1;
  pending.e.push(ts, txId, index);
}

export function pendingCount(pending: PendingJudgements): number {
  return pending.e.length / STRIDE;
}

export function earliestPending(pending: PendingJudgements): number {
  let earliest = Infinity;
  for (let i = 0; i < pending.e.length; i += STRIDE) if ((pending.e[i] as number) < earliest) earliest = pending.e[i] as number;
  return earliest;
}

/** The longest window of a pending transaction's rule (0 when none). */
export function longestPendingWindow(pending: PendingJudgements): number {
  let longest = 0;
  for (let i = 2; i < pending.e.length; i += STRIDE) longest = Math.max(longest, pending.r[pending.e[i] as number].windowMs);
  return longest;
}

/** Splits off what is due at `now`, in (ts, txId) order; `rest` keeps the others (undefined when none are left). */
export function takeDue(pending: PendingJudgements, now: number): { due: PendingItem[]; rest: PendingJudgements | undefined } {
  const due: PendingItem[] = [];
  const rest: PendingJudgements = { r: [], e: [] };
  for (let i = 0; i < pending.e.length; i += STRIDE) {
    const ts = pending.e[i] as number;
    const txId = pending.e[i + 1] as string;
    const rule = pending.r[pending.e[i + 2] as number];
    if (ts <= now) due.push({ ts, txId, rule });
    else addPending(rest, ts, txId, rule);
  }
  due.sort((a, b) => a.ts - b.ts || (a.txId < b.txId ? -1 : a.txId > b.txId ? 1 : 0));
  return { due, rest: rest.e.length > 0 ? rest : undefined };
}

/** Versions are immutable, but a copy that crossed a process boundary is another object: compare the fields. */
function sameRule(a: VersionedRule, b: VersionedRule): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    const va = (a as unknown as Record<string, unknown>)[k];
    const vb = (b as unknown as Record<string, unknown>)[k];
    if (va === vb) continue;
    if (!Array.isArray(va) || !Array.isArray(vb) || va.length !== vb.length || va.some((v, i) => v !== vb[i])) return false;
  }
  return true;
}
