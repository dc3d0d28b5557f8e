import type { DeclinedAction, PartitioningDecision } from '@weir/partitioner';
import type { OperatorLoad } from './operator-loads';
import type { DecidingMode, DecisionInputs, DecisionKind, Detection, PlannedDecision } from './scaling-decision';

/** Heavy keys kept in a decision's inputs: the head the planner weighed, not the sketch's whole list. */
const HEAVY_KEYS_KEPT = 16;
const REASON_MAX = 4000;

/**
 * Whether a decision is worth a row: it moves key groups, or it declines something other than the hysteresis band
 * (a hot key it may not split, a move the cool-down holds back, no move that helps, the budget). A balanced operator's
 * "nothing to do" is the common case and is not recorded.
 */
export function isNotable(decision: Pick<PartitioningDecision, 'moves' | 'declined'> & Partial<Pick<PartitioningDecision, 'splits' | 'foldBacks'>>): boolean {
  return decision.moves.length > 0 || (decision.splits?.length ?? 0) > 0 || (decision.foldBacks?.length ?? 0) > 0 || decision.declined.some((d) => d.reason !== 'hysteresis');
}

/** What makes two decisions the same decision: the moves, and what was declined and why (not the figures). */
export function signatureOf(decision: Pick<PlannedDecision, 'moves' | 'declined' | 'splits' | 'foldBacks'>): string {
  const moves = decision.moves.map((m) => `${m.keyGroup}:${m.fromSubtask}>${m.toSubtask}`);
  const splits = (decision.splits ?? []).map((s) => `${s.keyGroup}/${s.key}>${s.subtasks.join('+')}`);
  const folds = (decision.foldBacks ?? []).map((f) => `${f.keyGroup}/${f.key}<`);
  const declined = decision.declined.map((d) => `${d.action}/${d.reason}/${d.keyGroup ?? ''}/${d.key ?? ''}`).sort();
  return `${moves.join(',')}|${[...splits, ...folds].join(',')}|${declined.join(',')}`;
}

/** The operator's latest recorded decision, as far as repeating it matters. */
export interface LastRecorded {
  readonly signature: string;
  readonly decidedAtMs: number;
}

/**
 * Records a notable decision unless it repeats the operator's latest one within the cool-down: a skew that persists
 * (a hot key that may not be split, a recommendation nobody acted on, a move that failed) would otherwise write the
 * same row every interval. After the cool-down it is recorded (and in mode auto tried) again.
 */
export function shouldRecord(decision: Pick<PartitioningDecision, 'moves' | 'declined' | 'splits' | 'foldBacks'>, last: LastRecorded | null, nowMs: number, coolDownMs: number): boolean {
  if (!isNotable(decision)) return false;
  return !(last && last.signature === signatureOf(decision) && nowMs - last.decidedAtMs < coolDownMs);
}

export function kindOf(decision: Pick<PartitioningDecision, 'moves' | 'splits' | 'foldBacks'>): DecisionKind {
  if (decision.moves.length > 0) return 'MOVE_KEY_GROUPS';
  return decision.splits.length > 0 || decision.foldBacks.length > 0 ? 'SPLIT_KEYS' : 'DECLINED';
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2));

/** One sentence a tenant can read: what was seen, what is done (or recommended), what was declined and why. */
export function describeDecision(operatorId: string, decision: PartitioningDecision, detection: Detection, mode: DecidingMode): string {
  const parts: string[] = [];
  const seen = detection.overloadedSubtasks.map((s) => `subtask ${s.subtask} at ${fmt(s.ratio)}× its fair load (${fmt(s.load)} of ${fmt(s.fairLoad)} records/s)`);
  parts.push(`operator ${operatorId}: ${seen.length ? seen.join(', ') : `imbalance ${fmt(decision.imbalanceBefore)}`}`);
  if (detection.hotKeys.length) {
    parts.push(`hot key${detection.hotKeys.length === 1 ? '' : 's'} ${detection.hotKeys.map((k) => `"${k.key}" (key group ${k.keyGroup}, ${(k.share * 100).toFixed(1)}% of records)`).join(', ')}`);
  }
  if (decision.moves.length) {
    const moves = decision.moves.map((m) => `${m.keyGroup}: ${m.fromSubtask} → ${m.toSubtask}`).join(', ');
    const verb = mode === 'auto' ? 'moving' : 'recommends moving';
    parts.push(`${verb} ${decision.moves.length} key group${decision.moves.length === 1 ? '' : 's'} (${moves}) for ${fmt(decision.imbalanceBefore)}× → ${fmt(decision.imbalanceAfter)}×`);
  }
  for (const split of decision.splits) {
    const verb = mode === 'auto' ? 'splitting' : 'recommends splitting';
    const over = split.subtasks.map((s, i) => `${s} (${(split.weights[i] * 100).toFixed(0)}%)`).join(', ');
    parts.push(`${verb} key "${split.key}" (key group ${split.keyGroup}, ${fmt(split.evidence.keyRate)} records/s) over subtasks ${over}`);
  }
  for (const fold of decision.foldBacks) {
    parts.push(`${mode === 'auto' ? 'folding' : 'recommends folding'} key "${fold.key}" back to subtask ${fold.toSubtask} (${fmt(fold.evidence.keyRate)} records/s)`);
  }
  const declined = decision.declined.filter((d) => d.reason !== 'hysteresis');
  if (declined.length) parts.push(`declined: ${declined.map(describeDeclined).join('; ')}`);
  if (decision.unfinished) parts.push('unfinished: the budget stopped it above the aim, the next decision carries on');
  const reason = parts.join('; ');
  return reason.length > REASON_MAX ? `${reason.slice(0, REASON_MAX - 1)}…` : reason;
}

function describeDeclined(d: DeclinedAction): string {
  return `${d.action} (${d.reason}): ${d.detail}`;
}

/** The load model's figures a decision keeps as its inputs. */
export function inputsOf(operator: OperatorLoad): DecisionInputs {
  const { load, layout } = operator;
  return {
    keyGroupRates: [...load.keyGroupRates],
    capacities: [...load.capacities],
    heavyKeys: load.keyRates.slice(0, HEAVY_KEYS_KEPT).map((k) => ({ key: k.key, keyGroup: k.keyGroup, rate: k.rate, error: k.error })),
    owners: [...layout.owners],
    stateBytes: [...load.stateBytes],
    stateBytesSource: operator.stateBytesSource,
    fromMs: operator.fromMs,
    toMs: operator.toMs,
    subtasks: layout.subtasks,
  };
}

/** The decision as stored; `keySplits`: the split table it sets (mode auto, when it changes splits). */
export function plannedOf(decision: PartitioningDecision, keySplits?: PlannedDecision['keySplits']): PlannedDecision {
  return {
    moves: decision.moves,
    splits: decision.splits,
    foldBacks: decision.foldBacks,
    ...(keySplits ? { keySplits } : {}),
    declined: decision.declined,
    loadsBefore: decision.loadsBefore,
    loadsAfter: decision.loadsAfter,
    fairLoads: decision.fairLoads,
  };
}
