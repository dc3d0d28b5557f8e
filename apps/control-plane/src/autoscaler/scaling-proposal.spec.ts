import { describe, expect, it } from 'vitest';
import { defaultAutoscalerPolicy } from './autoscaler-settings';
import { operatorNeed, type OperatorRates } from './ds2';
import { proposeScaling, type PartitionerHotKey, type ProposalInput, type SloPressure } from './scaling-proposal';

/** An operator whose subtasks each process 1,000 records/s when busy all the time, at these busy shares (ms/s). */
function operator(busy: readonly number[], operatorId = 'counts'): OperatorRates {
  const subtaskRates = busy.map((b) => b);
  const mean = busy.reduce((a, b) => a + b, 0) / busy.length;
  const max = Math.max(...busy);
  return {
    operatorId,
    subtasks: busy.length,
    recordsInPerSec: subtaskRates.reduce((a, r) => a + r, 0),
    subtaskRates,
    busyMsPerSec: { mean, max, maxSubtask: busy.indexOf(max) },
    trueRatePerSubtask: 1_000,
    measuredSubtasks: busy.length,
  };
}

function input(busy: readonly number[], extra: Partial<ProposalInput> = {}, scale = 1): ProposalInput {
  const policy = defaultAutoscalerPolicy(128);
  const rates = operator(busy);
  return { processes: busy.length, operators: [{ rates, need: operatorNeed(rates, scale, policy.targetUtilization) }], policy, slo: null, hotKeyOf: () => null, fleetFreeSlots: 16, ...extra };
}

const slo = (latencyMs: number, pressure: boolean): SloPressure => ({ sloId: 'slo1', name: 'fast', percentile: 'p99', thresholdMs: 1_000, latencyMs, state: 'OK', burnRate: 0, pressure });

describe('what the figures ask for', () => {
  it('scales up in one step to the parallelism that meets the target at 70% when every subtask is busy', () => {
    const p = proposeScaling(input([900, 950]));
    expect(p).toMatchObject({ kind: 'scale', direction: 'up', operatorId: 'counts', parallelism: 3, wanted: 3, limitedBy: null, sloDriven: false });
    expect(p.why).toBe('operator counts at 93% utilization for 1850 records/s over 2 subtasks: above 80%; 3 subtasks meet it at 70%');
  });

  it('counts the backlog to drain: the same busy share with twice the target rate asks for twice the subtasks', () => {
    expect(proposeScaling(input([650, 650], {}, 2))).toMatchObject({ kind: 'scale', direction: 'up', parallelism: 4 });
  });

  it('holds within the band between 50% and 80%', () => {
    expect(proposeScaling(input([700, 750]))).toMatchObject({ kind: 'none' });
  });

  it('scales up before the SLO is missed when latency is near its threshold and busy is high, though the rates would not', () => {
    const p = proposeScaling(input([720, 760], { slo: slo(850, true) }));
    expect(p).toMatchObject({ kind: 'scale', direction: 'up', parallelism: 3, sloDriven: true });
    expect(p.why).toContain('SLO fast: p99 event-time latency 850 ms is above 80% of its 1000 ms threshold');
    // Latency high but the job not busy: more subtasks would not lower it.
    expect(proposeScaling(input([300, 300], { slo: slo(850, true) }))).toMatchObject({ kind: 'none' });
  });

  it('leaves one hot subtask while the mean is low to the partitioner, naming a hot key it may not split', () => {
    expect(proposeScaling(input([950, 200]))).toMatchObject({ kind: 'hold', code: 'imbalance', operatorId: 'counts', wanted: 2 });
    const hot: PartitionerHotKey = { decisionId: 's0000000000010000000000aa', key: 'viral', keyGroup: 0, share: 0.62 };
    const p = proposeScaling(input([950, 200], { hotKeyOf: (id) => (id === 'counts' ? hot : null) }));
    expect(p).toMatchObject({ kind: 'hold', code: 'hot-key' });
    expect(p.why).toContain('hot key "viral" (key group 0, 62% of records), whose split the partitioner declined as not mergeable');
  });

  it('is bounded up by the fleet’s free slots and the maximum parallelism, and holds when neither leaves room', () => {
    expect(proposeScaling(input([950, 950, 950, 950], { fleetFreeSlots: 1 }))).toMatchObject({ kind: 'scale', parallelism: 5, wanted: 6, limitedBy: 'fleet' });
    const none = proposeScaling(input([950, 950], { fleetFreeSlots: 0 }));
    expect(none).toMatchObject({ kind: 'hold', code: 'fleet', wanted: 3 });
    expect(none.why).toContain('held: the fleet has 0 free slots for 1 more process');
    const policy = { ...defaultAutoscalerPolicy(128), maxParallelism: 2 };
    expect(proposeScaling({ ...input([950, 950]), policy })).toMatchObject({ kind: 'hold', code: 'bounds' });
  });

  it('scales down below 50% to the fewest subtasks that keep 70%, never to a step that would need an up-step at once', () => {
    const p = proposeScaling(input([300, 300, 300, 300]));
    // 1,200 records/s at 700 per subtask: 2 subtasks (86% would be needed at 1 — above the up threshold).
    expect(p).toMatchObject({ kind: 'scale', direction: 'down', parallelism: 2, wanted: 2 });
    // Down to 2 would put the busiest subtask (450 ms/s now) at 90%: above 80%, so 3.
    expect(proposeScaling(input([450, 250, 250, 250]))).toMatchObject({ kind: 'scale', direction: 'down', parallelism: 3 });
    // Not under the minimum, nor while the SLO is under pressure.
    expect(proposeScaling({ ...input([100, 100]), policy: { ...defaultAutoscalerPolicy(128), minParallelism: 2 } })).toMatchObject({ kind: 'none' });
    expect(proposeScaling(input([100, 100], { slo: slo(900, true) }))).toMatchObject({ kind: 'none' });
  });
});
