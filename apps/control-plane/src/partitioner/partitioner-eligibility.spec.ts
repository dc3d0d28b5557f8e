import { describe, expect, it } from 'vitest';
import type { Deployment, DeploymentRun } from '../deployments/deployment';
import type { KeyGroupMove } from '../moves/key-group-move';
import { partitionerEligibility } from './partitioner-eligibility';

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
    partitionerMode: 'auto',
    autoscalerMode: 'recommend',
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
  const e = partitionerEligibility(d, r, move);
  return e.ok ? 'ok' : e.why;
};

describe('when the partitioner may plan a deployment', () => {
  it('plans a RUNNING deployment whose running run spans several processes', () => {
    expect(why(deployment(), run())).toBe('ok');
    expect(why(deployment({ partitionerMode: 'recommend' }), run())).toBe('ok');
  });

  it('waits a turn while anything else changes the run, and never plans one process or a run not running', () => {
    expect(why(deployment({ partitionerMode: 'off' }), run())).toBe('the partitioner is off for this deployment');
    expect(why(deployment({ status: 'RESCALING' }), run())).toBe('the deployment is RESCALING (desired RUNNING)');
    expect(why(deployment({ desiredState: 'SUSPENDED' }), run())).toBe('the deployment is RUNNING (desired SUSPENDED)');
    expect(why(deployment({ pendingUpgrade: { bundleId: 'b2', mode: 'savepoint', requestedAt: T0.toISOString() } }), run())).toBe('an upgrade is pending');
    expect(why(deployment({ pendingParallelism: { default: 1, operators: { counts: 4 } } }), run())).toBe('a parallelism change is pending');
    expect(why(deployment({ pendingStop: { savepointId: 'sp1', runNo: 1, requestedAt: T0.toISOString() } }), run())).toBe('a stop-with-savepoint is pending');
    expect(why(deployment(), run(), { moveId: 'm1' } as KeyGroupMove)).toBe('key-group move m1 is in flight');
    expect(why(deployment(), run(2, { runningAt: null }))).toBe('run 1 is not running');
    expect(why(deployment(), null)).toBe('run 1 is not running');
    expect(why(deployment(), run(1))).toBe('run 1 is in one process: key groups move live only between processes');
  });
});
