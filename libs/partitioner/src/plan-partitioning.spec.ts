import { describe, expect, it } from 'vitest';
import { applyDecision, changedKeyGroups } from './apply-decision';
import { PartitionerInputError } from './errors';
import { planPartitioning, type PartitioningInput } from './plan-partitioning';
import { layoutOf, loadsOf, modelOf, rangeOwners } from './test-support/load';

const MAXP = 128;

/** 128 key groups whose rates grow with the key group, with some noise: contiguous ranges end up far apart. */
function unevenRates(total: number): number[] {
  const raw = Array.from({ length: MAXP }, (_, kg) => 1 + kg / 32 + ((kg * 37) % 11) / 10);
  const sum = raw.reduce((a, r) => a + r, 0);
  return raw.map((r) => (r * total) / sum);
}

describe('planPartitioning: hysteresis', () => {
  it('holds a job within the band still: no action, one declined rebalance that says why', () => {
    const n = 4;
    const owners = rangeOwners(n, 16);
    // Subtask 0 at 1.08× its fair share, the others below.
    const rates = owners.map((o) => (o === 0 ? 27 : 24.333333333333332) / 4);
    const decision = planPartitioning({ layout: layoutOf(n, owners), load: modelOf(rates, n), nowMs: 0, splittable: true });
    expect(decision.imbalanceBefore).toBeCloseTo(1.08, 6);
    expect(decision.acted).toBe(false);
    expect(decision.moves).toEqual([]);
    expect(decision.splits).toEqual([]);
    expect(decision.declined).toEqual([expect.objectContaining({ action: 'rebalance', reason: 'hysteresis' })]);
    expect(decision.imbalanceAfter).toBe(decision.imbalanceBefore);
  });

  it('acts above the band and plans down to the aim, not just under the threshold', () => {
    const n = 8;
    const owners = rangeOwners(n, MAXP);
    const rates = unevenRates(8000);
    const decision = planPartitioning({ layout: layoutOf(n, owners), load: modelOf(rates, n), nowMs: 0, splittable: true, policy: { maxKeyGroupMoves: 64 } });
    expect(decision.imbalanceBefore).toBeGreaterThan(1.1);
    expect(decision.imbalanceAfter).toBeLessThanOrEqual(1.05);
    // The prediction is the plain arithmetic of the moves.
    const after = applyDecision(layoutOf(n, owners), decision);
    const loads = loadsOf(after.owners, rates, n);
    expect(Math.max(...loads) / (8000 / n)).toBeCloseTo(decision.imbalanceAfter, 9);
    // Each move lowers the subtask it leaves, and no key group moves twice.
    for (const m of decision.moves) expect(m.evidence.fromLoadAfter).toBeLessThan(m.evidence.fromLoad);
    expect(new Set(decision.moves.map((m) => m.keyGroup)).size).toBe(decision.moves.length);
  });
});

describe('planPartitioning: budget', () => {
  // Everything on subtask 0 of 4: the plan wants many moves.
  const n = 4;
  const owners = new Array<number>(32).fill(0);
  const rates = new Array<number>(32).fill(10);

  it('caps the moves of one decision and says the plan is unfinished', () => {
    const decision = planPartitioning({ layout: layoutOf(n, owners), load: modelOf(rates, n), nowMs: 0, splittable: true, policy: { maxKeyGroupMoves: 3 } });
    expect(decision.moves).toHaveLength(3);
    expect(decision.unfinished).toBe(true);
    expect(decision.declined).toContainEqual(expect.objectContaining({ action: 'move', reason: 'budget' }));
  });

  it('caps the state bytes moved: a key group too large for what is left is passed over for smaller ones', () => {
    const stateBytes = rates.map((_, kg) => (kg % 2 === 0 ? 1000 : 10));
    const decision = planPartitioning({
      layout: layoutOf(n, owners),
      load: modelOf(rates, n, [], { stateBytes }),
      nowMs: 0,
      splittable: true,
      policy: { maxKeyGroupMoves: 100, maxMoveBytes: 2050 },
    });
    const bytes = decision.moves.reduce((a, m) => a + m.evidence.stateBytes, 0);
    expect(bytes).toBeLessThanOrEqual(2050);
    // Small moves first: all 16 light key groups can go, plus at most two heavy ones.
    expect(decision.moves.filter((m) => m.evidence.stateBytes === 1000).length).toBeLessThanOrEqual(2);
    expect(decision.moves.length).toBeGreaterThan(10);
  });

  it('a continuing decision carries an unfinished plan on inside the band, down to the aim', () => {
    // 40 key groups of 4 records/s: after 29 moves subtask 0 keeps 11, at 1.1× its fair share of 40.
    const owners40 = new Array<number>(40).fill(0);
    const rates40 = new Array<number>(40).fill(4);
    const input: PartitioningInput = { layout: layoutOf(n, owners40), load: modelOf(rates40, n), nowMs: 0, splittable: true, policy: { maxKeyGroupMoves: 29 } };
    const first = planPartitioning(input);
    const layout = applyDecision(input.layout, first);
    const imbalance = Math.max(...loadsOf(layout.owners, rates40, n)) / 40;
    expect(imbalance).toBeGreaterThan(1.05);
    expect(imbalance).toBeLessThanOrEqual(1.1);
    expect(first.unfinished).toBe(true);
    expect(planPartitioning({ ...input, layout }).acted).toBe(false);
    const next = planPartitioning({ ...input, layout, continuing: true });
    expect(next.acted).toBe(true);
    expect(next.imbalanceAfter).toBeLessThanOrEqual(1.05);
  });
});

describe('planPartitioning: cool-down', () => {
  it('never moves a key group back within its cool-down, and reports what it declined', () => {
    const n = 2;
    // Subtask 0 holds key groups 0-3 (heavy), subtask 1 holds 4-7. Key groups 0 and 1 moved here a minute ago.
    const owners = [0, 0, 0, 0, 1, 1, 1, 1];
    const rates = [40, 40, 5, 5, 5, 5, 5, 5];
    const input: PartitioningInput = { layout: layoutOf(n, owners), load: modelOf(rates, n), nowMs: 60_000, lastChangedAtMs: { 0: 0, 1: 0 }, splittable: true };
    const decision = planPartitioning(input);
    expect(decision.moves.map((m) => m.keyGroup)).not.toContain(0);
    expect(decision.moves.map((m) => m.keyGroup)).not.toContain(1);
    expect(decision.declined).toContainEqual(expect.objectContaining({ action: 'move', reason: 'cool-down', keyGroup: 0 }));
    // Once the cool-down (5 min) is over, the key group that evens the load moves.
    const later = planPartitioning({ ...input, nowMs: 5 * 60_000 + 1 });
    expect(later.moves).toContainEqual(expect.objectContaining({ keyGroup: 0, fromSubtask: 0, toSubtask: 1 }));
    expect(changedKeyGroups(later)).toContain(0);
  });
});

describe('planPartitioning: hot-key splits', () => {
  const n = 8;
  const owners = rangeOwners(n, MAXP);
  const hotGroup = 37;
  // 10,000 records/s: one key has 30%, the rest spread evenly over the 128 key groups.
  const rates = new Array<number>(MAXP).fill(7000 / MAXP);
  rates[hotGroup] += 3000;
  const load = modelOf(rates, n, [
    { key: 'viral', keyGroup: hotGroup, rate: 3000 },
    { key: 'warm', keyGroup: 3, rate: 20 },
  ]);
  const input: PartitioningInput = { layout: layoutOf(n, owners), load, nowMs: 0, splittable: true, policy: { maxKeyGroupMoves: 64 } };

  it('splits a key of 30% share at n = 8 over the smallest k that fits (3: 2 parts of 1,500/s exceed the aim)', () => {
    const decision = planPartitioning(input);
    expect(decision.splits).toHaveLength(1);
    const split = decision.splits[0];
    expect(split).toMatchObject({ key: 'viral', keyGroup: hotGroup, change: 'new' });
    const aim = 1.05 * (10_000 / n);
    expect(3000 / 2).toBeGreaterThan(aim);
    expect(split.subtasks).toHaveLength(3);
    // The key group's owner keeps a part (its state is there); the others are distinct subtasks.
    expect(split.subtasks[0]).toBe(owners[hotGroup]);
    expect(new Set(split.subtasks).size).toBe(3);
    expect(split.weights.reduce((a, w) => a + w, 0)).toBeCloseTo(1, 9);
    expect(split.evidence.keyShare).toBeCloseTo(0.3, 9);
    // With the other key groups moved around the parts, the operator is within the aim; moves alone could not get
    // below 3,054/s on the hot key group's subtask (2.4× its fair share).
    expect(decision.imbalanceBefore).toBeGreaterThan(2.4);
    expect(decision.imbalanceAfter).toBeLessThanOrEqual(1.05);
    expect(decision.moves.map((m) => m.keyGroup)).not.toContain(hotGroup);
  });

  it('does not split keys whose state cannot merge: it says so and moves around them', () => {
    const decision = planPartitioning({ ...input, splittable: false });
    expect(decision.splits).toEqual([]);
    expect(decision.declined).toContainEqual(expect.objectContaining({ action: 'split', reason: 'not-mergeable', key: 'viral' }));
    expect(decision.moves.every((m) => m.fromSubtask === owners[hotGroup] || m.keyGroup !== hotGroup)).toBe(true);
  });

  it('widens a split key whose rate outgrew its parts, keeping the parts it has', () => {
    const first = planPartitioning(input);
    const layout = applyDecision(input.layout, first);
    const hotter = modelOf(
      rates.map((r, kg) => (kg === hotGroup ? r + 3000 : r)),
      n,
      [{ key: 'viral', keyGroup: hotGroup, rate: 6000 }],
    );
    const widened = planPartitioning({ ...input, layout, load: hotter, nowMs: 10 * 60_000, lastChangedAtMs: { [hotGroup]: 0 } });
    expect(widened.splits[0]).toMatchObject({ key: 'viral', change: 'widen' });
    expect(widened.splits[0].subtasks.length).toBeGreaterThan(3);
    expect(widened.splits[0].subtasks.slice(0, 3)).toEqual(layout.splits[0].subtasks);
  });

  it('re-weights a split key whose parts are uneven: a routing change that moves no state and starts no cool-down', () => {
    const layout = applyDecision(input.layout, planPartitioning(input));
    const [split] = layout.splits;
    const skewed = { ...layout, splits: [{ ...split, weights: [0.9, 0.05, 0.05] }] };
    const decision = planPartitioning({ ...input, layout: skewed, lastChangedAtMs: { [hotGroup]: 0 }, nowMs: 1000 });
    expect(decision.splits).toEqual([expect.objectContaining({ key: 'viral', change: 'reweight', subtasks: split.subtasks })]);
    expect(decision.splits[0].weights[0]).toBeLessThan(0.5);
    expect(decision.imbalanceAfter).toBeLessThanOrEqual(1.05);
    expect(changedKeyGroups(decision)).not.toContain(hotGroup);
  });

  it('re-weights a split key inside the hysteresis band (no state moves), but moves and splits nothing there', () => {
    const layout = applyDecision(input.layout, planPartitioning(input));
    const [split] = layout.splits;
    // The owner's part a little too large: 1.08× at most, inside the band.
    const nudged = { ...layout, splits: [{ ...split, weights: [split.weights[0] + 0.03, split.weights[1] - 0.015, split.weights[2] - 0.015] }] };
    const decision = planPartitioning({ ...input, layout: nudged, nowMs: 10 * 60_000 });
    expect(decision.imbalanceBefore).toBeGreaterThan(1.05);
    expect(decision.imbalanceBefore).toBeLessThanOrEqual(1.1);
    expect(decision.moves).toEqual([]);
    expect(decision.splits).toEqual([expect.objectContaining({ change: 'reweight' })]);
    expect(decision.imbalanceAfter).toBeLessThan(decision.imbalanceBefore);
    expect(decision.declined).toContainEqual(expect.objectContaining({ reason: 'hysteresis' }));
  });

  it('folds a split key back to its key group owner once it cools, after its cool-down', () => {
    const layout = applyDecision(input.layout, planPartitioning(input));
    const cooled = rates.map((r, kg) => (kg === hotGroup ? 7000 / MAXP + 100 : r));
    const cool = modelOf(cooled, n, [{ key: 'viral', keyGroup: hotGroup, rate: 100 }]);
    const early = planPartitioning({ ...input, layout, load: cool, nowMs: 60_000, lastChangedAtMs: { [hotGroup]: 0 } });
    expect(early.foldBacks).toEqual([]);
    expect(early.declined).toContainEqual(expect.objectContaining({ action: 'fold-back', reason: 'cool-down', key: 'viral' }));
    const decision = planPartitioning({ ...input, layout, load: cool, nowMs: 10 * 60_000, lastChangedAtMs: { [hotGroup]: 0 } });
    expect(decision.foldBacks).toEqual([
      expect.objectContaining({ key: 'viral', keyGroup: hotGroup, toSubtask: layout.owners[hotGroup], fromSubtasks: layout.splits[0].subtasks }),
    ]);
    expect(applyDecision(layout, decision).splits).toEqual([]);
  });

  it('keeps a split key that cooled only a little (hysteresis between split and fold-back)', () => {
    const layout = applyDecision(input.layout, planPartitioning(input));
    const mild = modelOf(rates.map((r, kg) => (kg === hotGroup ? 7000 / MAXP + 900 : r)), n, [{ key: 'viral', keyGroup: hotGroup, rate: 900 }]);
    const decision = planPartitioning({ ...input, layout, load: mild, nowMs: 10 * 60_000 });
    expect(decision.foldBacks).toEqual([]);
  });
});

describe('planPartitioning: determinism and input checks', () => {
  it('gives the same decision for the same input', () => {
    const n = 16;
    const rates = unevenRates(50_000);
    rates[9] += 12_000;
    const input: PartitioningInput = {
      layout: layoutOf(n, rangeOwners(n, MAXP)),
      load: modelOf(rates, n, [{ key: 'k', keyGroup: 9, rate: 12_000 }], { stateBytes: rates.map((r) => Math.round(r * 100)) }),
      nowMs: 1000,
      lastChangedAtMs: { 3: 900, 40: 500 },
      splittable: true,
    };
    const a = planPartitioning(input);
    const b = planPartitioning(structuredClone(input));
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(a.acted).toBe(true);
  });

  it('refuses a layout and a load of different shapes, and thresholds that cross', () => {
    const n = 2;
    const layout = layoutOf(n, [0, 1, 0, 1]);
    expect(() => planPartitioning({ layout, load: modelOf([1, 1, 1], n), nowMs: 0, splittable: true })).toThrow(PartitionerInputError);
    expect(() => planPartitioning({ layout: layoutOf(n, [0, 2, 0, 1]), load: modelOf([1, 1, 1, 1], n), nowMs: 0, splittable: true })).toThrow(/outside \[0, 2\)/);
    expect(() => planPartitioning({ layout, load: modelOf([1, 1, 1, 1], n), nowMs: 0, splittable: true, policy: { aimBelow: 1.2, actAbove: 1.1 } })).toThrow(PartitionerInputError);
  });

  it('weighs subtasks by capacity: a subtask twice as fast gets twice the load', () => {
    const n = 2;
    const owners = new Array<number>(30).fill(0);
    const rates = new Array<number>(30).fill(10);
    const decision = planPartitioning({ layout: layoutOf(n, owners), load: modelOf(rates, n, [], { capacities: [100, 200] }), nowMs: 0, splittable: true, policy: { maxKeyGroupMoves: 30 } });
    expect(decision.fairLoads).toEqual([100, 200]);
    expect(decision.loadsAfter).toEqual([100, 200]);
  });
});

describe('applyDecision', () => {
  it('refuses a decision planned from another layout', () => {
    const n = 2;
    const owners = [0, 0, 0, 0];
    const decision = planPartitioning({ layout: layoutOf(n, owners), load: modelOf([10, 10, 10, 10], n), nowMs: 0, splittable: true });
    expect(decision.moves.length).toBeGreaterThan(0);
    expect(() => applyDecision(layoutOf(n, [1, 1, 1, 1]), decision)).toThrow(/planned from another layout/);
  });
});
