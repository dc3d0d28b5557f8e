import { describe, expect, it } from 'vitest';
import type { Deployment, DeploymentRun } from '../deployments/deployment';
import type { KeyGroupMove } from '../moves/key-group-move';
import { autoscalerEligibility, lastChangeAtMs } from './autoscaler-eligibility';

const T0 = new Date('2026-01-01T00:00:00Z');

function deployment(overrides: Partial<Deployment> = {}): Deployment {
  return {
    tenantId: 't1',
    id: 'd1',
    name: 'n',
    bundleId: 'b1',
    parallelism: { default: 1, operators: { counts: 2 } },
    config: {},
    desiredState: 'RUNNING',
    status: 'RUNNING',
    statusReason: 'running',
    pendingUpgrade: null,
    pendingParallelism: null,
    pendingRescaleMode: null,
    pendingRestore: null,
    pendingStop: null,
    partitionerMode: 'recommend',
    autoscalerMode: 'auto',
    runNo: 1,
    layout: null,
    rescale: null,
    createdAt: T0,
    updatedAt: T0,
    statusChangedAt: T0,
    ...overrides,
  };
}

function run(processes = 2, overrides: Partial<DeploymentRun> = {}): DeploymentRun {
  return {
    deploymentId: 'd1',
    runNo: 1,
    workerId: 'w1',
    bundleId: 'b1',
    subtasks: [],
    slots: processes,
    processes: Array.from({ length: processes }, (_, index) => ({ index, workerId: 'w1', subtasks: [] })),
    routing: null,
    restoreFrom: null,
    startedReason: 'started',
    placedAt: T0,
    dispatchedAt: T0,
    runningAt: T0,
    stopSentAt: null,
    endedAt: null,
    outcome: null,
    endReason: null,
    ...overrides,
  };
}

const why = (d: Deployment, r: DeploymentRun | null, move: KeyGroupMove | null = null) => {
  const e = autoscalerEligibility(d, r, move);
  return e.ok ? 'ok' : e.why;
};

const rescale = (state: 'MOVING' | 'DONE', finishedAt: Date | null): Deployment['rescale'] => ({
  rescaleId: 'r1', runNo: 1, fromParallelism: { default: 1, operators: { counts: 2 } }, toParallelism: { default: 1, operators: { counts: 3 } },
  fromProcesses: 2, toProcesses: 3, state, reason: '', moved: 0, total: 0, report: null, requestedAt: T0, joinedAt: null, startedAt: null, finishedAt,
});

describe('when the autoscaler may look at a deployment', () => {
  it('looks at a RUNNING deployment with a running run, in one process too (it may scale out of it)', () => {
    expect(why(deployment(), run())).toBe('ok');
    expect(why(deployment({ autoscalerMode: 'recommend' }), run(1))).toBe('ok');
  });

  it('skips the look while a rescale, a move, an upgrade, a stop or a restore is in flight or pending', () => {
    expect(why(deployment({ autoscalerMode: 'off' }), run())).toBe('the autoscaler is off for this deployment');
    expect(why(deployment({ status: 'RESCALING' }), run())).toBe('the deployment is RESCALING (desired RUNNING)');
    expect(why(deployment({ rescale: rescale('MOVING', null) }), run())).toBe('live rescale r1 is in flight');
    expect(why(deployment({ pendingParallelism: { default: 1, operators: { counts: 4 } } }), run())).toBe('a parallelism change is pending');
    expect(why(deployment({ pendingUpgrade: { bundleId: 'b2', mode: 'savepoint', requestedAt: T0.toISOString() } }), run())).toBe('an upgrade is pending');
    expect(why(deployment({ pendingStop: { savepointId: 'sp1', runNo: 1, requestedAt: T0.toISOString() } }), run())).toBe('a stop-with-savepoint is pending');
    expect(why(deployment({ pendingRestore: { snapshotId: 'sp1', location: 's3://x', origin: 'requested', reason: 'asked', allowNonRestoredState: false } }), run())).toBe('a restore is pending');
    expect(why(deployment(), run(), { moveId: 'm1' } as KeyGroupMove)).toBe('key-group move m1 is in flight');
    expect(why(deployment(), run(2, { runningAt: null }))).toBe('run 1 is not running');
  });

  it('counts the cool-down from the later of the last rescale’s end and the run’s start', () => {
    const later = new Date(T0.getTime() + 60_000);
    expect(lastChangeAtMs(deployment({ rescale: rescale('DONE', later) }), run())).toBe(later.getTime());
    expect(lastChangeAtMs(deployment(), run(2, { runningAt: later }))).toBe(later.getTime());
    expect(lastChangeAtMs(deployment(), run(2, { runningAt: null }))).toBeNull();
  });
});
