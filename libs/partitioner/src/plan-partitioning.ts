/**
 * planPartitioning: one decision of the dynamic partitioner for one keyed operator, from its layout and its load.
 *
 * Order of steps, and why:
 * 1. Fold back split keys that cooled (housekeeping, even in a balanced job).
 * 2. Hysteresis: below `actAbove` no key group moves or splits, so a job near balance is left alone (above the aim,
 *    split keys may still be re-weighted: that moves no state).
 * 3. Split key groups no subtask can take whole (a move cannot get below the hottest key group's load; k subtasks
 *    can share one key, and only when its state merges).
 * 4. Move key groups within the budget, re-levelling the split keys' weights between rounds (a re-weight moves no
 *    state and evens what whole key groups are too coarse to).
 * Pure and deterministic: the same input gives the same decision (ties go to the lower index).
 */
import type { DeclinedAction, KeySplit, PartitioningDecision } from './decision';
import { PartitionerInputError } from './errors';
import { checkLayout, type PartitionLayout } from './layout';
import type { LoadModel } from './load-model';
import { fmt, type PlanContext } from './plan-context';
import { planFoldBacks } from './plan-fold-backs';
import { planMoves, type MoveBudget } from './plan-moves';
import { dropEmptyParts, levelSplits, planSplits } from './plan-splits';
import { PlanningSheet, type WorkingSplit } from './planning-sheet';
import { partitioningPolicy, type PartitioningPolicy } from './policy';

export interface PartitioningInput {
  /** The layout the load was measured under: owners, split keys, subtask count. */
  readonly layout: PartitionLayout;
  readonly load: LoadModel;
  /** Defaults: DEFAULT_PARTITIONING_POLICY. */
  readonly policy?: Partial<PartitioningPolicy>;
  /** The clock the cool-downs are measured on (epoch ms). */
  readonly nowMs: number;
  /** key group → epoch ms it last moved, split or folded back (see changedKeyGroups); absent: not cooling down. */
  readonly lastChangedAtMs?: Readonly<Record<number, number>>;
  /** Whether the operator's state merges partials; when not, hot keys are never split, only moved around. */
  readonly splittable: boolean;
  /**
   * The previous decision's `unfinished`: it stopped on its budget above the aim, so this one carries on down to the
   * aim even inside the hysteresis band (the band holds a job still, not a plan half made).
   */
  readonly continuing?: boolean;
}

/** Move-and-level rounds: a second round moves what the first round's re-levelling made worth moving. */
const ROUNDS = 3;
/** A re-weight smaller than this on every subtask is not worth a routing change. */
const REWEIGHT_MIN = 0.01;

export function planPartitioning(input: PartitioningInput): PartitioningDecision {
  checkLayout(input.layout);
  if (input.load.stateBytes.length !== input.layout.owners.length) {
    throw new PartitionerInputError(`the load model has state bytes of ${input.load.stateBytes.length} key groups, the layout ${input.layout.owners.length}`);
  }
  const policy = partitioningPolicy(input.policy);
  const ctx: PlanContext = { policy, nowMs: input.nowMs, lastChangedAtMs: input.lastChangedAtMs ?? {}, splittable: input.splittable };
  const sheet = new PlanningSheet(input.layout, input.load);
  const imbalanceBefore = sheet.imbalance();
  const loadsBefore = Array.from(sheet.loads);
  const declined: DeclinedAction[] = [];

  const folded = planFoldBacks(sheet, ctx);
  declined.push(...folded.declined);
  const gate = sheet.imbalance();
  const threshold = input.continuing ? policy.aimBelow : policy.actAbove;
  if (gate <= threshold) {
    // Inside the band no state moves, but a split key's weights may: a re-weight costs a routing change, nothing more.
    if (gate > policy.aimBelow) relevelIfBetter(sheet);
    declined.push({
      action: 'rebalance',
      reason: 'hysteresis',
      detail: `the most loaded subtask is at ${fmt(gate)}× its fair load, within ${threshold}×${input.continuing ? ' (the aim: the previous plan is finished)' : ''}: no key group moves or splits`,
      evidence: { imbalance: gate, actAbove: policy.actAbove, aimBelow: policy.aimBelow },
    });
    return finish(sheet, policy, imbalanceBefore, loadsBefore, [], folded.foldBacks, declined);
  }

  declined.push(...planSplits(sheet, ctx));
  const budget: MoveBudget = { moves: policy.maxKeyGroupMoves, bytes: policy.maxMoveBytes };
  const moved = new Set<number>();
  const moves = [];
  const coolingDown = new Map<string, DeclinedAction>();
  let stoppedBecause: DeclinedAction[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    levelSplits(sheet);
    const step = planMoves(sheet, ctx, budget, moved);
    moves.push(...step.moves);
    for (const d of step.declined) if (d.reason === 'cool-down' && !coolingDown.has(`${d.keyGroup}`)) coolingDown.set(`${d.keyGroup}`, d);
    // Only the last round's reason for stopping stands: earlier ones were lifted by the re-levelling after them.
    stoppedBecause = step.declined.filter((d) => d.reason !== 'cool-down');
    if (step.moves.length === 0) break;
  }
  declined.push(...coolingDown.values(), ...stoppedBecause);
  levelSplits(sheet);
  dropEmptyParts(sheet);
  return finish(sheet, policy, imbalanceBefore, loadsBefore, moves, folded.foldBacks, declined);
}

/** Re-levels the split keys' weights, and keeps the new weights only when they lower the imbalance. */
function relevelIfBetter(sheet: PlanningSheet): void {
  if (sheet.splits.length === 0) return;
  const before = sheet.imbalance();
  const saved = sheet.splits.map((s) => ({ split: s, subtasks: s.subtasks, weights: s.weights }));
  levelSplits(sheet);
  if (sheet.imbalance() < before) return;
  for (const { split, subtasks, weights } of saved) sheet.setWeights(split, subtasks, weights);
}

function finish(
  sheet: PlanningSheet,
  policy: PartitioningPolicy,
  imbalanceBefore: number,
  loadsBefore: number[],
  moves: PartitioningDecision['moves'],
  foldBacks: PartitioningDecision['foldBacks'],
  declined: DeclinedAction[],
): PartitioningDecision {
  const aimLoad = policy.aimBelow * sheet.meanFair;
  const splits = sheet.splits.map((s) => splitChange(sheet, s, aimLoad)).filter((s): s is KeySplit => s !== null);
  const imbalanceAfter = sheet.imbalance();
  return {
    acted: moves.length + splits.length + foldBacks.length > 0,
    unfinished: imbalanceAfter > policy.aimBelow && declined.some((d) => d.reason === 'budget'),
    imbalanceBefore,
    imbalanceAfter,
    loadsBefore,
    loadsAfter: Array.from(sheet.loads),
    fairLoads: Array.from(sheet.fair),
    moves,
    splits,
    foldBacks,
    declined,
  };
}

function splitChange(sheet: PlanningSheet, split: WorkingSplit, aimLoad: number): KeySplit | null {
  const previous = split.previous;
  let change: KeySplit['change'];
  if (previous === null) change = 'new';
  else if (split.subtasks.length > previous.subtasks.length) change = 'widen';
  else if (split.weights.some((w, i) => Math.abs(w - previous.weights[i]) >= REWEIGHT_MIN)) change = 'reweight';
  else return null;
  const keyGroupRate = sheet.model.keyGroupRates[split.keyGroup];
  const parts = split.subtasks.map((s, i) => `${s}: ${fmt(split.weights[i])}`).join(', ');
  const why = {
    new: `key group ${split.keyGroup} carries ${fmt(keyGroupRate)} records/s, more than any subtask takes at the aim (${fmt(aimLoad)}); key "${split.key}" has ${fmt(split.rate)} of it and is split over ${split.subtasks.length} subtasks`,
    widen: `split key "${split.key}" rose to ${fmt(split.rate)} records/s, more than its ${previous?.subtasks.length} parts take: widened to ${split.subtasks.length}`,
    reweight: `split key "${split.key}" (${fmt(split.rate)} records/s) re-weighted to even its subtasks' loads (no state moves)`,
  }[change];
  return {
    key: split.key,
    keyGroup: split.keyGroup,
    subtasks: [...split.subtasks],
    weights: [...split.weights],
    change,
    reason: `${why} (${parts})`,
    evidence: {
      keyRate: split.rate,
      keyShare: sheet.total > 0 ? split.rate / sheet.total : 0,
      keyGroupRate,
      aimLoad,
      previousSubtasks: previous ? [...previous.subtasks] : [],
      previousWeights: previous ? [...previous.weights] : [],
    },
  };
}
