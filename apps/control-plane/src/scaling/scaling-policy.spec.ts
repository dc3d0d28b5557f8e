import { describe, expect, it } from 'vitest';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { parseInput } from '../validation/parse-input';
import { scalingPolicyPatchBody } from '../scaling-policy/scaling-policy.dto';
import { changedFields, mergePolicy, partitioningPolicyOf, policyFromProperties, policyViewOf, policyViolations, storedOf, withModes, type ScalingPolicy } from './scaling-policy';

const modes = { partitionerMode: 'recommend', autoscalerMode: 'recommend' } as const;
const defaults = (): ScalingPolicy => withModes(policyFromProperties({}, 32), modes);

function problems(body: unknown): { name: string; reason: string }[] {
  try {
    parseInput(scalingPolicyPatchBody, body, 'body');
    return [];
  } catch (err) {
    if (!(err instanceof InvalidRequestProblem)) throw err;
    return (err.errors ?? []).map((e) => ({ name: e.name, reason: e.reason }));
  }
}

describe('the scaling policy', () => {
  it('starts from the deployment properties over the defaults', () => {
    const p = policyFromProperties({ properties: { 'autoscaler.target-utilization': '0.6', 'partitioner.interval-ms': '5000', 'autoscaler.max-parallelism': '8' } }, 32);
    expect(p.autoscaler).toMatchObject({ targetUtilization: 0.6, maxParallelism: 8, minParallelism: 1, intervalMs: 15_000 });
    expect(p.partitioner).toEqual({ intervalMs: 5_000, moveBudget: 16, actAbove: 1.1, aimBelow: 1.05, coolDownMs: 300_000, maxMovePauseMs: 1_000 });
    // A value that slipped past validation (an older deployment) reads as the defaults, never fails a look.
    expect(policyFromProperties({ properties: { 'partitioner.interval-ms': 'soon' } }, 32).partitioner.intervalMs).toBe(30_000);
  });

  it('reads stored fields over the properties, says where it came from and caps the bounds at the bundle', () => {
    const deployment = { id: 'd1', config: { properties: { 'autoscaler.cooldown-ms': '0' } }, ...modes };
    expect(policyViewOf(deployment, 32, null)).toMatchObject({ source: 'properties', updatedAt: null, updatedBy: null, policy: { autoscaler: { cooldownMs: 0, maxParallelism: 32 } } });
    const at = new Date();
    const view = policyViewOf(deployment, 16, { stored: { partitioner: { moveBudget: 64 }, autoscaler: { maxParallelism: 32, minParallelism: 20 } }, updatedAt: at, updatedBy: 'k1' });
    expect(view).toMatchObject({ source: 'api', updatedAt: at, updatedBy: 'k1' });
    expect(view.policy.partitioner).toMatchObject({ mode: 'recommend', moveBudget: 16, intervalMs: 30_000 });
    expect(view.policy.autoscaler).toMatchObject({ cooldownMs: 0, maxParallelism: 16, minParallelism: 16 });
  });

  it('merges a patch and names what changed', () => {
    const before = defaults();
    const after = mergePolicy(before, { partitioner: { mode: 'off' }, autoscaler: { targetUtilization: 0.5, maxParallelism: 32 } });
    expect(after.partitioner).toEqual({ ...before.partitioner, mode: 'off' });
    expect(after.autoscaler.targetUtilization).toBe(0.5);
    expect(changedFields(before, after)).toEqual(['partitioner.mode', 'autoscaler.targetUtilization']);
    expect(changedFields(before, before)).toEqual([]);
    expect(storedOf(after).partitioner).not.toHaveProperty('mode');
  });

  it('checks the merged policy against the bundle and across fields, naming each field with its range', () => {
    expect(policyViolations(defaults(), 32)).toEqual([]);
    expect(policyViolations(mergePolicy(defaults(), { autoscaler: { maxParallelism: 64 } }), 32)).toEqual([
      { in: 'body', name: 'autoscaler.maxParallelism', reason: "must be an integer in [1, 32] (the bundle's maxParallelism is 32), not 64" },
    ]);
    expect(policyViolations(mergePolicy(defaults(), { partitioner: { moveBudget: 33 } }), 32)[0]).toMatchObject({ name: 'partitioner.moveBudget' });
    expect(policyViolations(mergePolicy(defaults(), { autoscaler: { minParallelism: 9, maxParallelism: 8 } }), 32)).toEqual([
      { in: 'body', name: 'autoscaler.minParallelism', reason: 'must not exceed autoscaler.maxParallelism (8)' },
    ]);
    expect(policyViolations(mergePolicy(defaults(), { partitioner: { aimBelow: 1.2, actAbove: 1.15 } }), 32)).toEqual([
      { in: 'body', name: 'partitioner.aimBelow', reason: 'must not exceed partitioner.actAbove (1.15): the band is aimBelow ≤ imbalance ≤ actAbove' },
    ]);
  });

  it("becomes libs/partitioner's policy with the budget the move costs leave", () => {
    const p = partitioningPolicyOf({ ...defaults().partitioner, actAbove: 1.3, aimBelow: 1.2, coolDownMs: 1_000 }, 3);
    expect(p).toMatchObject({ actAbove: 1.3, aimBelow: 1.2, coolDownMs: 1_000, maxKeyGroupMoves: 3, maxMoveBytes: 512 * 1024 * 1024 });
  });
});

describe('the scaling policy PATCH body', () => {
  it('takes any subset of fields', () => {
    expect(problems({ partitioner: { mode: 'auto', moveBudget: 4 } })).toEqual([]);
    expect(problems({ autoscaler: { targetUtilization: 0.5, minParallelism: 2 } })).toEqual([]);
  });

  it('refuses bad values with the field and its range', () => {
    expect(problems({ autoscaler: { targetUtilization: 2 } })).toEqual([{ name: 'autoscaler.targetUtilization', reason: 'must be a number in [0.1, 0.95]' }]);
    expect(problems({ partitioner: { intervalMs: 10 } })).toEqual([{ name: 'partitioner.intervalMs', reason: 'must be an integer in [1000, 3600000]' }]);
    expect(problems({ partitioner: { moveBudget: 2.5 } })).toEqual([{ name: 'partitioner.moveBudget', reason: 'must be an integer in [1, 32768]' }]);
    expect(problems({ partitioner: { mode: 'sometimes' } })).toEqual([{ name: 'partitioner.mode', reason: 'must be one of off, recommend, auto' }]);
    expect(problems({ autoscaler: { maxParallelism: '8' } })).toEqual([{ name: 'autoscaler.maxParallelism', reason: 'must be an integer in [1, 32768]' }]);
    expect(problems({ autoscaler: { cooldownMs: null } })).toEqual([{ name: 'autoscaler.cooldownMs', reason: 'must be an integer in [0, 86400000]' }]);
    // An unknown field is named; with nothing else given, the body also changes nothing.
    expect(problems({ partitioner: { splitFill: 0.9 } })).toEqual([
      { name: 'partitioner.splitFill', reason: 'is not a recognised parameter' },
      { name: 'partitioner', reason: 'give at least one field of partitioner or autoscaler' },
    ]);
    expect(problems({})).toEqual([{ name: 'partitioner', reason: 'give at least one field of partitioner or autoscaler' }]);
    expect(problems({ partitioner: {} })).toEqual([{ name: 'partitioner', reason: 'give at least one field of partitioner or autoscaler' }]);
  });
});
