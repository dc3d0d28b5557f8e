import { describe, expect, it } from 'vitest';
import type { Deployment, DeploymentRun, DeploymentStatus, LiveRescale, Parallelism, RunOutcome } from '../../deployments/deployment';
import type { RunRefusal } from '../../placement/command-gateway';
import type { JobObservation } from '../job-observation';
import { isAllowedTransition } from '../transitions';
import type { LiveRescaleStep, Next, PlaceResult, ReconcileActions, ReconcileContext } from '../state-machine';
import { STATE_HANDLERS } from './index';

const T0 = new Date('2026-01-01T00:00:00Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

function deployment(overrides: Partial<Deployment> = {}): Deployment {
  return {
    tenantId: 't1',
    id: 'd1',
    name: 'n',
    bundleId: 'b1',
    parallelism: { default: 1, operators: {} },
    config: {},
    desiredState: 'RUNNING',
    status: 'CREATED',
    statusReason: 'created',
    pendingUpgrade: null,
    pendingParallelism: null,
    pendingRescaleMode: null,
    pendingRestore: null,
    pendingStop: null,
    partitionerMode: 'recommend',
    autoscalerMode: 'recommend',
    runNo: 0,
    layout: null,
    rescale: null,
    createdAt: T0,
    updatedAt: T0,
    statusChangedAt: later(1_000),
    ...overrides,
  };
}

function run(overrides: Partial<DeploymentRun> = {}): DeploymentRun {
  const workerId = overrides.workerId ?? 'w1';
  const subtasks = overrides.subtasks ?? [{ operatorId: 'src', subtask: 0, keyGroups: [[0, 127]] }];
  return {
    deploymentId: 'd1',
    runNo: 1,
    workerId,
    bundleId: 'b1',
    subtasks,
    slots: overrides.processes?.length ?? 1,
    processes: [{ index: 0, workerId, subtasks }],
    routing: null,
    restoreFrom: null,
    startedReason: 'test',
    placedAt: later(2_000),
    dispatchedAt: later(2_000),
    runningAt: null,
    stopSentAt: null,
    endedAt: null,
    outcome: null,
    endReason: null,
    ...overrides,
  };
}

/** Records every side effect a handler asks for. */
class FakeActions implements ReconcileActions {
  readonly calls: string[] = [];
  placeResult: PlaceResult = { placed: true, run: run({ runNo: 2, workerId: 'w2', placedAt: later(5_000), dispatchedAt: null }) };
  refused: RunRefusal | null = null;
  /** Savepoints on "S3", and the worker's refusals of take-savepoint commands. */
  savepoints = new Set<string>();
  savepointFailure: string | null = null;
  commandMissing = false;
  async placeRun(o: { bundleId: string; parallelism: Parallelism; restoreFrom?: DeploymentRun['restoreFrom']; keptState?: boolean }) {
    const state = o.keptState === false ? ' no-kept' : '';
    this.calls.push(`place ${o.bundleId} p${o.parallelism.default}${o.restoreFrom ? ` from ${o.restoreFrom.snapshotId}` : ''}${state}`);
    return this.placeResult;
  }
  async dispatchRun(r: DeploymentRun) {
    if (!r.dispatchedAt) this.calls.push(`dispatch ${r.runNo}`);
  }
  async stopRun(r: DeploymentRun, _reason: string, savepointId?: string) {
    if (!r.stopSentAt) this.calls.push(`stop ${r.runNo}${savepointId ? ` with ${savepointId}` : ''}`);
  }
  async markRunning(r: DeploymentRun) {
    this.calls.push(`running ${r.runNo}`);
  }
  async endRun(r: DeploymentRun, outcome: RunOutcome) {
    this.calls.push(`end ${r.runNo} ${outcome}`);
  }
  async runFailure() {
    return this.refused;
  }
  async adoptPendingUpgrade() {
    this.calls.push('adopt upgrade');
  }
  async adoptPendingParallelism() {
    this.calls.push('adopt parallelism');
  }
  /** What beginRescale says, and the steps stepLiveRescale returns in turn (the last one repeats). */
  rescaleBegun = 'parallelism change requested: restarting';
  liveSteps: LiveRescaleStep[] = [{ kind: 'stay', note: 'moving' }];
  async beginRescale(r: DeploymentRun) {
    this.calls.push(`begin rescale of ${r.runNo}`);
    return this.rescaleBegun;
  }
  async stepLiveRescale(rescale: LiveRescale, r: DeploymentRun) {
    this.calls.push(`step ${rescale.rescaleId} ${rescale.state} of ${r.runNo}`);
    return this.liveSteps.length > 1 ? this.liveSteps.shift()! : this.liveSteps[0];
  }
  async abandonRescale(rescale: LiveRescale, reason: string) {
    this.calls.push(`abandon ${rescale.rescaleId}: ${reason}`);
  }
  async keepState(_r: DeploymentRun | null, savepointIds: readonly string[]) {
    const found = savepointIds.find((id) => this.savepoints.has(id));
    this.calls.push(`keep ${found ?? 'latest'}`);
    return found ? `a resume restores savepoint ${found}` : "a resume restores the job's latest usable checkpoint";
  }
  async savepointTaken(id: string) {
    return this.savepoints.has(id) ? `key/${id}` : null;
  }
  async savepointRefused() {
    return this.savepointFailure;
  }
  async savepointCommandMissing() {
    return this.commandMissing;
  }
  async suspendAfterStop() {
    this.calls.push('desired SUSPENDED');
  }
  async clearPendingStop(id: string) {
    this.calls.push(`clear stop ${id}`);
  }
}

const P0 = { process: 0, workerId: 'w1' };
/** What the workers of a run in one process (process 0 on w1) report. */
const seen = (kind: 'absent' | 'running' | 'failed' | 'changing', subtasks = 1): JobObservation => {
  const reporting = subtasks > 0 ? [P0] : [];
  if (kind === 'failed') return { kind, ...P0, subtasks, reporting };
  return { kind, subtasks, reporting, notRunning: kind === 'running' ? [] : [P0] };
};
const gone: JobObservation = { kind: 'process-gone', ...P0, cause: { kind: 'worker-not-alive', workerStatus: 'LOST' }, reporting: [] };

async function step(status: DeploymentStatus, opts: { d?: Partial<Deployment>; run?: DeploymentRun | null; job?: JobObservation; now?: Date; actions?: FakeActions } = {}) {
  const actions = opts.actions ?? new FakeActions();
  const r = opts.run === undefined ? null : opts.run;
  const ctx: ReconcileContext = {
    deployment: deployment({ status, runNo: r?.runNo ?? 0, ...opts.d }),
    run: r,
    job: opts.job ?? (r ? seen('absent', 0) : { kind: 'no-run' }),
    now: opts.now ?? later(3_000),
    startTimeoutMs: 90_000,
    actions,
  };
  const next: Next = await STATE_HANDLERS[status](ctx);
  // Every transition a handler asks for must be in the lifecycle's table (the reconciler refuses any other).
  if (next.kind === 'transition') expect(isAllowedTransition(status, next.to), `${status} → ${next.to}`).toBe(true);
  return { next, calls: actions.calls };
}

const to = (next: Next) => (next.kind === 'transition' ? next.to : 'stay');

describe('CREATED', () => {
  it.each([
    ['RUNNING', 'STARTING'],
    ['SUSPENDED', 'SUSPENDED'],
    ['CANCELLED', 'CANCELLED'],
  ] as const)('desired %s → %s, touching no worker', async (desiredState, expected) => {
    const { next, calls } = await step('CREATED', { d: { desiredState } });
    expect(to(next)).toBe(expected);
    expect(calls).toEqual([]);
  });
});

describe('STARTING', () => {
  it('places the first run, dispatches it in the next step, and stays until the worker reports it', async () => {
    const { next, calls } = await step('STARTING');
    expect(next).toEqual({ kind: 'stay', note: 'run 2 placed on worker w2', again: true });
    expect(calls).toEqual(['place b1 p1']);
    // The next step, in a transaction of its own, sends the command.
    const sent = await step('STARTING', { run: run({ dispatchedAt: null }), job: seen('absent', 0) });
    expect(sent.calls).toEqual(['dispatch 1']);
  });

  it('stays with the reason when the fleet has too few free slots, adopting nothing yet', async () => {
    const actions = new FakeActions();
    actions.placeResult = { placed: false, reason: 'waiting for 4 free slots: the fleet has 3 free on 2 live workers' };
    const { next, calls } = await step('STARTING', { actions, d: { pendingParallelism: { default: 4, operators: {} } } });
    // The deadline is the status's start (statusChangedAt) plus the default placement timeout (5 minutes).
    expect(next).toEqual({ kind: 'stay', note: 'waiting for 4 free slots: the fleet has 3 free on 2 live workers; FAILED at 2026-01-01T00:05:01.000Z if still not placed' });
    expect(calls).toEqual(['place b1 p4']);
  });

  it('goes FAILED with the reason once the placement timeout (placement.timeout-ms) passed', async () => {
    const noRoom = () => {
      const actions = new FakeActions();
      actions.placeResult = { placed: false, reason: 'waiting for 4 free slots: the fleet has 3 free on 2 live workers' };
      return actions;
    };
    const config = { properties: { 'placement.timeout-ms': '60000' } };
    const waiting = await step('STARTING', { actions: noRoom(), d: { config }, now: later(1_000 + 60_000) });
    expect(to(waiting.next)).toBe('stay');
    const { next, calls } = await step('STARTING', { actions: noRoom(), d: { config }, now: later(1_000 + 60_001) });
    expect(next).toEqual({
      kind: 'transition',
      to: 'FAILED',
      reason: 'no run could be placed within 60 s: waiting for 4 free slots: the fleet has 3 free on 2 live workers; a restart starts without state',
    });
    expect(calls).toEqual(['place b1 p1']);
  });

  it('a recovery that cannot be placed in time keeps the latest checkpoint, and adopts a pending parallelism for the restart', async () => {
    const actions = new FakeActions();
    actions.placeResult = { placed: false, reason: 'waiting for 2 free slots: the fleet has no live worker' };
    const lost = run({ endedAt: later(2_000), outcome: 'LOST' });
    const { next, calls } = await step('RECOVERING', { run: lost, job: gone, actions, d: { pendingParallelism: { default: 2, operators: {} } }, now: later(2_000 + 300_001) });
    expect(next).toMatchObject({ to: 'FAILED', reason: "no run could be placed within 300 s: waiting for 2 free slots: the fleet has no live worker; a restart restores the job's latest usable checkpoint" });
    expect(calls).toEqual(['place b1 p2 from latest', 'adopt parallelism', 'keep latest']);
    // The wait is counted from the end of the previous run when that came after the status began.
    expect(to((await step('RECOVERING', { run: lost, job: gone, actions: new FakeActions(), now: later(2_000 + 300_000) })).next)).toBe('stay');
  });

  it('goes RUNNING once the worker reports every subtask RUNNING', async () => {
    const { next, calls } = await step('STARTING', { run: run(), job: seen('running', 2) });
    expect(to(next)).toBe('RUNNING');
    expect(calls).toEqual(['running 1']);
  });

  it('waits while subtasks are still starting', async () => {
    expect(to((await step('STARTING', { run: run(), job: seen('changing') })).next)).toBe('stay');
  });

  it('goes FAILED with the worker’s reason when it refused the command', async () => {
    const actions = new FakeActions();
    actions.refused = { process: 0, workerId: 'w1', reason: 'bundle sha256 mismatch' };
    const { next, calls } = await step('STARTING', { run: run(), actions });
    expect(next).toEqual({ kind: 'transition', to: 'FAILED', reason: "run 1: worker w1 refused it: bundle sha256 mismatch; a restart restores the job's latest usable checkpoint" });
    expect(calls).toEqual(['stop 1', 'end 1 FAILED', 'keep latest']);
  });

  it('goes FAILED when the run is not reported within the start timeout', async () => {
    const { next, calls } = await step('STARTING', { run: run(), now: later(2_000 + 90_001) });
    expect(to(next)).toBe('FAILED');
    expect(calls).toEqual(['stop 1', 'end 1 FAILED', 'keep latest']);
  });

  it('goes FAILED when the worker reports the job FAILED, and stops it to free the slots', async () => {
    const { next, calls } = await step('STARTING', { run: run(), job: seen('failed') });
    expect(to(next)).toBe('FAILED');
    expect(calls).toEqual(['stop 1', 'end 1 FAILED', 'keep latest']);
  });

  it("names the job's failure in the FAILED reason when the worker gave it", async () => {
    const { next } = await step('RUNNING', { run: run(), job: { ...seen('failed'), failure: 'the job ran out of memory' } as JobObservation });
    expect(next).toMatchObject({ to: 'FAILED', reason: expect.stringMatching(/^run 1: worker w1 reports the job FAILED: the job ran out of memory; a restart restores/) });
  });

  it('a run that failed restoring a savepoint before it ran keeps that savepoint for the restart', async () => {
    const actions = new FakeActions();
    actions.savepoints.add('sp-1');
    const restoring = run({ restoreFrom: { snapshotId: 'sp-1', location: 'k' } });
    const { next, calls } = await step('STARTING', { run: restoring, job: seen('failed'), actions });
    expect(next).toMatchObject({ to: 'FAILED', reason: expect.stringMatching(/; a restart restores savepoint sp-1$/) });
    expect(calls).toEqual(['stop 1', 'end 1 FAILED', 'keep sp-1']);
    // Once it ran, its own checkpoints are newer than the savepoint: the latest one is kept.
    const ran = run({ restoreFrom: { snapshotId: 'sp-1', location: 'k' }, runningAt: later(2_500) });
    expect((await step('RUNNING', { run: ran, job: seen('failed'), actions: new FakeActions() })).calls).toEqual(['stop 1', 'end 1 FAILED', 'keep latest']);
  });

  it('goes RECOVERING when the worker is lost before the job runs', async () => {
    const { next, calls } = await step('STARTING', { run: run(), job: gone });
    expect(to(next)).toBe('RECOVERING');
    expect(calls).toEqual(['stop 1', 'end 1 LOST']);
  });

  it('goes STOPPING when the desired state is no longer RUNNING', async () => {
    expect(to((await step('STARTING', { run: run(), d: { desiredState: 'SUSPENDED' } })).next)).toBe('STOPPING');
  });
});

describe('RUNNING', () => {
  const running = run({ runningAt: later(2_500) });

  it('stays while the job runs', async () => {
    const { next, calls } = await step('RUNNING', { run: running, job: seen('running') });
    expect(next).toEqual({ kind: 'stay', note: undefined });
    expect(calls).toEqual([]);
  });

  it('goes STOPPING on desired SUSPENDED with a stop-with-savepoint, on CANCELLED with a plain stop', async () => {
    const suspend = await step('RUNNING', { run: running, job: seen('running'), d: { desiredState: 'SUSPENDED' } });
    expect(suspend.next).toEqual({ kind: 'transition', to: 'STOPPING', reason: 'desired state SUSPENDED: stop-with-savepoint suspend-run-1 sent to worker w1' });
    expect(suspend.calls).toEqual(['stop 1 with suspend-run-1']);
    const cancel = await step('RUNNING', { run: running, job: seen('running'), d: { desiredState: 'CANCELLED' } });
    expect(to(cancel.next)).toBe('STOPPING');
    expect(cancel.calls).toEqual(['stop 1']);
  });

  describe("the tenant's stop-with-savepoint", () => {
    const pendingStop = { savepointId: 'sp-x', runNo: 1, requestedAt: T0.toISOString() };

    it('waits while the savepoint is taken: the desired state stays RUNNING', async () => {
      const { next, calls } = await step('RUNNING', { run: running, job: seen('running'), d: { pendingStop } });
      expect(next).toEqual({ kind: 'stay', note: 'stop-with-savepoint sp-x: waiting for the savepoint, then the stop' });
      expect(calls).toEqual([]);
    });

    it('once the job left with its savepoint on S3: desired SUSPENDED, state kept, SUSPENDED', async () => {
      const actions = new FakeActions();
      actions.savepoints.add('sp-x');
      const { next, calls } = await step('RUNNING', { run: running, job: seen('absent', 0), d: { pendingStop }, actions });
      expect(to(next)).toBe('SUSPENDED');
      expect((next as { reason: string }).reason).toMatch(/stopped with savepoint sp-x .*a resume restores savepoint sp-x/);
      expect(calls).toEqual(['end 1 STOPPED', 'keep sp-x', 'desired SUSPENDED']);
    });

    it('a failed savepoint: the job keeps running, the failure is the status reason, the stop is forgotten', async () => {
      const actions = new FakeActions();
      actions.savepointFailure = 'savepoint sp-x failed: S3 refused';
      const { next, calls } = await step('RUNNING', { run: running, job: seen('running'), d: { pendingStop }, actions });
      expect(next).toEqual({ kind: 'stay', note: 'stop-with-savepoint sp-x failed, so the job keeps running: savepoint sp-x failed: S3 refused' });
      expect(calls).toEqual(['clear stop sp-x']);
    });

    it('a stop whose command is not queued a minute on was lost: the job keeps running, the stop is forgotten', async () => {
      const actions = new FakeActions();
      actions.commandMissing = true;
      const { next, calls } = await step('RUNNING', { run: running, job: seen('running'), d: { pendingStop }, now: later(61_000), actions });
      expect(next).toEqual({
        kind: 'stay',
        note: "stop-with-savepoint sp-x was lost: its command is not in worker w1's queue 61 s after the request, so the job keeps running; trigger it again",
      });
      expect(calls).toEqual(['clear stop sp-x']);
    });

    it.each([
      ['within the first minute', 59_000, true, false],
      ['while the command is queued', 61_000, false, false],
      ['when the savepoint is on S3 (the stop is on its way)', 61_000, true, true],
    ])('keeps waiting %s', async (_when, afterMs, missing, taken) => {
      const actions = new FakeActions();
      actions.commandMissing = missing;
      if (taken) actions.savepoints.add('sp-x');
      const { next, calls } = await step('RUNNING', { run: running, job: seen('running'), d: { pendingStop }, now: later(afterMs), actions });
      expect(next).toEqual({ kind: 'stay', note: 'stop-with-savepoint sp-x: waiting for the savepoint, then the stop' });
      expect(calls).toEqual([]);
    });

    it('one of another run is ignored', async () => {
      const { next } = await step('RUNNING', { run: running, job: seen('running'), d: { pendingStop: { ...pendingStop, runNo: 0 } } });
      expect(next).toEqual({ kind: 'stay', note: undefined });
    });
  });

  it('goes UPGRADING for a restore requested while it runs (the next run takes it)', async () => {
    const pendingRestore = { snapshotId: 'sp-1', location: 'k', origin: 'requested' as const, reason: 'savepoint sp-1 (checkpoint 4)', allowNonRestoredState: false };
    const { next, calls } = await step('RUNNING', { run: running, job: seen('running'), d: { pendingRestore } });
    expect(next).toEqual({ kind: 'transition', to: 'UPGRADING', reason: 'restore requested (savepoint sp-1 (checkpoint 4)): stopping run 1, then starting from it' });
    expect(calls).toEqual([]);
    const kept = await step('RUNNING', { run: running, job: seen('running'), d: { pendingRestore: { ...pendingRestore, origin: 'kept' } } });
    expect(to(kept.next)).toBe('stay');
  });

  it('goes RECOVERING when its worker is LOST, saying the state is not recovered', async () => {
    const { next } = await step('RUNNING', { run: running, job: gone });
    expect(next).toEqual({ kind: 'transition', to: 'RECOVERING', reason: 'worker w1 is LOST (it hosted process 0 of run 1): re-placing the job, restoring its latest checkpoint' });
  });

  it('goes RECOVERING when its worker restarted without the job', async () => {
    const restarted = await step('RUNNING', { run: running, job: { ...gone, cause: { kind: 'worker-restarted' } } });
    expect(restarted.next).toEqual({
      kind: 'transition',
      to: 'RECOVERING',
      reason: 'worker w1 restarted without process 0 of run 1: re-placing the job, restoring its latest checkpoint',
    });
  });

  it('goes FAILED when the worker reports FAILED, keeping its latest checkpoint for a restart', async () => {
    const { next, calls } = await step('RUNNING', { run: running, job: seen('failed') });
    expect(to(next)).toBe('FAILED');
    expect(calls).toEqual(['stop 1', 'end 1 FAILED', 'keep latest']);
  });

  it('goes FINISHED when the job leaves the worker on its own', async () => {
    const { next, calls } = await step('RUNNING', { run: running, job: seen('absent', 0) });
    expect(to(next)).toBe('FINISHED');
    expect(calls).toEqual(['end 1 FINISHED']);
  });

  it('goes UPGRADING for a pending upgrade, and RESCALING for a pending parallelism', async () => {
    const upgrade = { bundleId: 'b2', mode: 'savepoint' as const, requestedAt: T0.toISOString() };
    const up = await step('RUNNING', { run: running, job: seen('running'), d: { pendingUpgrade: upgrade } });
    expect(to(up.next)).toBe('UPGRADING');
    expect((up.next as { reason: string }).reason).toMatch(/stops with a savepoint and the new one starts from it/);
    const re = await step('RUNNING', { run: running, job: seen('running'), d: { pendingParallelism: { default: 2, operators: {} } } });
    expect(to(re.next)).toBe('RESCALING');
  });
});

describe('RESCALING / UPGRADING / RECOVERING', () => {
  // The run that was open when the status was entered (placed before statusChangedAt).
  const old = run({ placedAt: T0, runningAt: T0 });

  it('UPGRADING stops the old run and waits until the worker dropped it', async () => {
    const d = { pendingUpgrade: { bundleId: 'b2', mode: 'stateless' as const, requestedAt: T0.toISOString() } };
    const { next, calls } = await step('UPGRADING', { run: old, job: seen('running'), d });
    expect(next).toEqual({ kind: 'stay', note: 'stopping run 1 on worker w1' });
    expect(calls).toEqual(['stop 1']);
  });

  it('UPGRADING adopts the new bundle and starts it once the old run is gone', async () => {
    const d = { pendingUpgrade: { bundleId: 'b2', mode: 'last-state' as const, requestedAt: T0.toISOString() } };
    const { next, calls } = await step('UPGRADING', { run: { ...old, stopSentAt: later(1_500) }, job: seen('absent', 0), d });
    expect(to(next)).toBe('stay');
    expect(calls).toEqual(['end 1 REPLACED', 'place b2 p1 from latest', 'adopt upgrade']);
  });

  it('UPGRADING in mode savepoint stops the old run with a savepoint and keeps it for the new version', async () => {
    const d = { pendingUpgrade: { bundleId: 'b2', mode: 'savepoint' as const, requestedAt: T0.toISOString() } };
    const stopping = await step('UPGRADING', { run: old, job: seen('running'), d });
    expect(stopping.calls).toEqual(['stop 1 with upgrade-run-1']);
    const actions = new FakeActions();
    actions.savepoints.add('upgrade-run-1');
    const { calls } = await step('UPGRADING', { run: { ...old, stopSentAt: later(1_500) }, job: seen('absent', 0), d, actions });
    expect(calls).toEqual(['end 1 REPLACED', 'keep upgrade-run-1', 'place b2 p1 from latest', 'adopt upgrade']);
  });

  it('UPGRADING in mode stateless places without the state kept at suspend', async () => {
    const d = { pendingUpgrade: { bundleId: 'b2', mode: 'stateless' as const, requestedAt: T0.toISOString() } };
    const { calls } = await step('UPGRADING', { run: { ...old, stopSentAt: later(1_500) }, job: seen('absent', 0), d });
    expect(calls).toEqual(['end 1 REPLACED', 'place b2 p1 no-kept', 'adopt upgrade']);
  });

  it('RESCALING places the run with the pending parallelism', async () => {
    const d = { pendingParallelism: { default: 3, operators: {} } };
    const { calls } = await step('RESCALING', { run: { ...old, stopSentAt: later(1_500) }, job: seen('absent', 0), d });
    expect(calls).toEqual(['end 1 REPLACED', 'place b1 p3 from latest', 'adopt parallelism']);
  });

  it('RECOVERING writes off the run on the lost worker and places a new one elsewhere', async () => {
    const { calls } = await step('RECOVERING', { run: old, job: gone });
    expect(calls).toEqual(['stop 1', 'end 1 LOST', 'place b1 p1 from latest']);
  });

  it('RECOVERING a run that restored a savepoint but never ran restores that savepoint again', async () => {
    const restoreFrom = { snapshotId: 'suspend-run-1', location: 'k' };
    const { calls } = await step('RECOVERING', { run: run({ runNo: 2, placedAt: T0, restoreFrom }), job: gone });
    expect(calls).toEqual(['stop 2', 'end 2 LOST', 'place b1 p1 from suspend-run-1']);
    const ran = await step('RECOVERING', { run: run({ runNo: 2, placedAt: T0, runningAt: T0, restoreFrom }), job: gone });
    expect(ran.calls.at(-1)).toBe('place b1 p1 from latest');
  });

  it('RECOVERING goes RUNNING when the new run runs, saying what it restored', async () => {
    const restoreFrom = { snapshotId: 'latest', location: 'tenants/t1/jobs/d1/' };
    const { next } = await step('RECOVERING', { run: run({ runNo: 2, workerId: 'w2', restoreFrom }), job: { kind: 'running', subtasks: 1, reporting: [{ process: 0, workerId: 'w2' }], notRunning: [] } });
    expect(next).toEqual({ kind: 'transition', to: 'RUNNING', reason: "run 2: 1 subtasks running on worker w2; restored the job's latest usable checkpoint" });
  });

  it('RECOVERING places again at once when the new run’s worker is lost too', async () => {
    const { next, calls } = await step('RECOVERING', { run: run({ runNo: 2 }), job: gone });
    expect(to(next)).toBe('stay');
    expect(calls).toEqual(['stop 2', 'end 2 LOST', 'place b1 p1 from latest']);
  });
});

describe('a run in several processes', () => {
  const layout = [
    { index: 0, workerId: 'w1', subtasks: [{ operatorId: 'src', subtask: 0, keyGroups: [[0, 63]] as [number, number][] }] },
    { index: 1, workerId: 'w2', subtasks: [{ operatorId: 'src', subtask: 1, keyGroups: [[64, 127]] as [number, number][] }] },
  ];
  const wide = (o: Partial<DeploymentRun> = {}) => run({ processes: layout, subtasks: layout.flatMap((p) => p.subtasks), ...o });
  const P1 = { process: 1, workerId: 'w2' };
  const lostHost: JobObservation = { kind: 'process-gone', ...P1, cause: { kind: 'job-host-lost' }, reporting: [P0] };

  it('RUNNING goes RECOVERING when one process’s job host is LOST (not FAILED), naming the process and worker', async () => {
    const { next, calls } = await step('RUNNING', { run: wide({ runningAt: later(2_500) }), job: lostHost });
    expect(next).toEqual({
      kind: 'transition',
      to: 'RECOVERING',
      reason:
        'process 1 of run 1 on worker w2 was lost: its job host died without reporting a failure (killed, or out of memory): re-placing the job, restoring its latest checkpoint',
    });
    expect(calls).toEqual([]);
  });

  it('RECOVERING writes off the whole run, stops the survivors and places the next run only once they left', async () => {
    const old = wide({ placedAt: T0, runningAt: T0 });
    const workerLost: JobObservation = { kind: 'process-gone', ...P1, cause: { kind: 'worker-not-alive', workerStatus: 'LOST' }, reporting: [P0] };
    const first = await step('RECOVERING', { run: old, job: workerLost });
    expect(first.calls).toEqual(['stop 1', 'end 1 LOST']);
    expect(first.next).toEqual({ kind: 'stay', note: 'waiting for run 1 to leave process 0 on worker w1 before the next run starts' });
    const ended = { ...old, stopSentAt: later(3_000), endedAt: later(3_000), outcome: 'LOST' as const };
    const stillThere = await step('RECOVERING', { run: ended, job: workerLost, now: later(10_000) });
    expect(stillThere.calls).toEqual([]);
    const left = await step('RECOVERING', { run: ended, job: { ...workerLost, reporting: [] }, now: later(10_000) });
    expect(left.calls).toEqual(['place b1 p1 from latest']);
    // A survivor its worker never drops does not hold the job down past the start timeout from the stop.
    const stuck = await step('RECOVERING', { run: ended, job: workerLost, now: later(3_000 + 90_001) });
    expect(stuck.calls).toEqual(['place b1 p1 from latest']);
  });

  it('FAILED when one process reports FAILED, naming it', async () => {
    const failed: JobObservation = { kind: 'failed', ...P1, subtasks: 2, reporting: [P0, P1] };
    const { next, calls } = await step('RUNNING', { run: wide({ runningAt: later(2_500) }), job: failed });
    expect(next).toMatchObject({ to: 'FAILED', reason: expect.stringMatching(/^run 1: process 1 on worker w2 reports the job FAILED \(see the worker's log/) });
    expect(calls).toEqual(['stop 1', 'end 1 FAILED', 'keep latest']);
  });

  it('a refusal and the start timeout name the process and worker', async () => {
    const actions = new FakeActions();
    actions.refused = { process: 1, workerId: 'w2', reason: 'bundle sha256 mismatch' };
    const refused = await step('STARTING', { run: wide(), actions });
    expect(refused.next).toMatchObject({ to: 'FAILED', reason: expect.stringMatching(/^run 1: worker w2 refused it \(process 1 of 2\): bundle sha256 mismatch; /) });
    const starting: JobObservation = { kind: 'changing', subtasks: 1, reporting: [P0], notRunning: [P1] };
    const late = await step('STARTING', { run: wide(), job: starting, now: later(2_000 + 90_001) });
    expect(late.next).toMatchObject({ to: 'FAILED', reason: expect.stringMatching(/^run 1: process 1 on worker w2 did not report it running within 90 s; /) });
  });

  it('goes RUNNING naming the layout; a suspend stops every worker of it with the savepoint', async () => {
    const running: JobObservation = { kind: 'running', subtasks: 2, reporting: [P0, P1], notRunning: [] };
    const { next } = await step('STARTING', { run: wide(), job: running });
    expect(next).toEqual({ kind: 'transition', to: 'RUNNING', reason: 'run 1: 2 subtasks running on 2 processes (0 on worker w1; 1 on worker w2); started without state' });
    const suspend = await step('RUNNING', { run: wide({ runningAt: later(2_500) }), job: running, d: { desiredState: 'SUSPENDED' } });
    expect(suspend.next).toMatchObject({ to: 'STOPPING', reason: 'desired state SUSPENDED: stop-with-savepoint suspend-run-1 sent to workers w1, w2' });
    const waiting = await step('STOPPING', { run: wide({ runningAt: later(2_500), stopSentAt: later(2_600) }), job: { ...running, kind: 'changing', reporting: [P1] }, d: { desiredState: 'SUSPENDED' } });
    expect(waiting.next).toEqual({ kind: 'stay', note: 'waiting for process 1 on worker w2 to stop run 1' });
  });
});

describe('STOPPING', () => {
  it('waits until the worker dropped the job, then settles as desired', async () => {
    const r = run({ runningAt: later(2_500), stopSentAt: later(2_600) });
    expect(to((await step('STOPPING', { run: r, job: seen('changing'), d: { desiredState: 'SUSPENDED' } })).next)).toBe('stay');
    const done = await step('STOPPING', { run: r, job: seen('absent', 0), d: { desiredState: 'SUSPENDED' } });
    expect(done.next).toEqual({ kind: 'transition', to: 'SUSPENDED', reason: "run 1 stopped on worker w1; a resume restores the job's latest usable checkpoint" });
    expect(done.calls).toEqual(['end 1 STOPPED', 'keep latest']);
    expect(to((await step('STOPPING', { run: r, job: seen('absent', 0), d: { desiredState: 'CANCELLED' } })).next)).toBe('CANCELLED');
  });

  it('toward SUSPENDED keeps the savepoint its stop took (the tenant\'s own stop-with-savepoint first)', async () => {
    const actions = new FakeActions();
    actions.savepoints.add('suspend-run-1');
    const r = run({ runningAt: later(2_500) });
    const { next, calls } = await step('STOPPING', { run: r, job: seen('absent', 0), d: { desiredState: 'SUSPENDED' }, actions });
    expect(calls).toEqual(['stop 1 with suspend-run-1', 'end 1 STOPPED', 'keep suspend-run-1']);
    expect((next as { reason: string }).reason).toBe('run 1 stopped on worker w1; a resume restores savepoint suspend-run-1');
    actions.savepoints.add('sp-user');
    const pendingStop = { savepointId: 'sp-user', runNo: 1, requestedAt: T0.toISOString() };
    const both = await step('STOPPING', { run: { ...r, stopSentAt: later(2_600) }, job: seen('absent', 0), d: { desiredState: 'SUSPENDED', pendingStop }, actions: new FakeActions() });
    expect(both.calls.at(-1)).toBe('keep latest');
    const user = new FakeActions();
    user.savepoints = new Set(['sp-user', 'suspend-run-1']);
    const preferred = await step('STOPPING', { run: { ...r, stopSentAt: later(2_600) }, job: seen('absent', 0), d: { desiredState: 'SUSPENDED', pendingStop }, actions: user });
    expect(preferred.calls).toEqual(['end 1 STOPPED', 'keep sp-user']);
  });

  it('settles when the worker went away meanwhile, keeping the latest checkpoint for a resume', async () => {
    const { next, calls } = await step('STOPPING', { run: run(), job: gone, d: { desiredState: 'SUSPENDED' } });
    expect(to(next)).toBe('SUSPENDED');
    expect(calls).toEqual(['stop 1', 'end 1 LOST', 'keep latest']);
    const cancelled = await step('STOPPING', { run: run(), job: gone, d: { desiredState: 'CANCELLED' } });
    expect(cancelled.calls).toEqual(['stop 1', 'end 1 LOST']);
  });
});

describe('resting states', () => {
  it('SUSPENDED resumes on desired RUNNING (saying from what) and ends on CANCELLED', async () => {
    expect(await step('SUSPENDED', { d: { desiredState: 'RUNNING' } })).toMatchObject({
      next: { to: 'STARTING', reason: 'desired state RUNNING: resuming without state (none was kept)' },
    });
    const pendingRestore = { snapshotId: 'suspend-run-1', location: 'k', origin: 'kept' as const, reason: 'savepoint suspend-run-1 (checkpoint 9, taken as run 1 stopped)', allowNonRestoredState: false };
    expect(await step('SUSPENDED', { d: { desiredState: 'RUNNING', pendingRestore } })).toMatchObject({
      next: { to: 'STARTING', reason: 'desired state RUNNING: resuming from savepoint suspend-run-1 (checkpoint 9, taken as run 1 stopped)' },
    });
    expect(to((await step('SUSPENDED', { d: { desiredState: 'CANCELLED' } })).next)).toBe('CANCELLED');
    expect(to((await step('SUSPENDED', { d: { desiredState: 'SUSPENDED' } })).next)).toBe('stay');
  });

  it('FAILED stays failed until the tenant acts', async () => {
    expect(to((await step('FAILED')).next)).toBe('stay');
    expect(to((await step('FAILED', { d: { desiredState: 'SUSPENDED' } })).next)).toBe('SUSPENDED');
    expect(to((await step('FAILED', { d: { desiredState: 'CANCELLED' } })).next)).toBe('CANCELLED');
    const upgrade = { bundleId: 'b2', mode: 'stateless' as const, requestedAt: T0.toISOString() };
    expect(to((await step('FAILED', { d: { pendingUpgrade: upgrade } })).next)).toBe('UPGRADING');
  });

  it('FAILED and FINISHED start again when RUNNING is asked for after they settled', async () => {
    const patchedLater = { desiredState: 'RUNNING' as const, statusChangedAt: later(1_000), updatedAt: later(2_000) };
    expect(to((await step('FAILED', { d: patchedLater })).next)).toBe('STARTING');
    expect(to((await step('FINISHED', { d: patchedLater })).next)).toBe('STARTING');
    // The state kept as it failed is what the restart starts from (a stateless PATCH deleted it: none).
    const kept = { snapshotId: 'latest', location: 'k', origin: 'kept' as const, reason: "the job's latest usable checkpoint (checkpoint 7 as it stopped)", allowNonRestoredState: false };
    expect((await step('FAILED', { d: { ...patchedLater, pendingRestore: kept } })).next).toEqual({
      kind: 'transition', to: 'STARTING', reason: "desired state RUNNING set again after the failure: restarting from the job's latest usable checkpoint (checkpoint 7 as it stopped)",
    });
    expect((await step('FAILED', { d: patchedLater })).next).toMatchObject({ reason: 'desired state RUNNING set again after the failure: restarting without state' });
    // Not while the worker still reports the failed run: the new run would be taken for failed at once.
    const ended = run({ endedAt: later(2_500), outcome: 'FAILED' });
    expect((await step('FAILED', { d: patchedLater, run: ended, job: seen('failed') })).next).toEqual({ kind: 'stay', note: 'waiting for worker w1 to drop failed run 1', soon: true });
    expect(to((await step('FAILED', { d: patchedLater, run: ended, job: seen('absent', 0) })).next)).toBe('STARTING');
    // Nor does the wait overwrite the failure's reason when nothing was asked for.
    expect((await step('FAILED', { run: ended, job: seen('failed') })).next).toEqual({ kind: 'stay' });
    // The transition into FAILED itself stamps updated_at before status_changed_at: no restart loop.
    expect(to((await step('FAILED', { d: { statusChangedAt: later(1_000), updatedAt: later(999) } })).next)).toBe('stay');
  });

  it('FINISHED moves only on request; CANCELLED never moves', async () => {
    expect(to((await step('FINISHED')).next)).toBe('stay');
    expect(to((await step('FINISHED', { d: { desiredState: 'CANCELLED' } })).next)).toBe('CANCELLED');
    for (const desiredState of ['RUNNING', 'SUSPENDED', 'CANCELLED'] as const) {
      expect(to((await step('CANCELLED', { d: { desiredState } })).next)).toBe('stay');
    }
  });
});

describe('RESCALING live', () => {
  const old = run({ placedAt: T0, runningAt: T0 });
  const rescale = (overrides: Partial<LiveRescale> = {}): LiveRescale => ({
    rescaleId: 'r1',
    runNo: 1,
    fromParallelism: { default: 2, operators: {} },
    toParallelism: { default: 4, operators: {} },
    fromProcesses: 2,
    toProcesses: 4,
    state: 'MOVING',
    reason: '',
    moved: 0,
    total: 0,
    report: null,
    requestedAt: T0,
    joinedAt: T0,
    startedAt: T0,
    finishedAt: null,
    ...overrides,
  });
  const d = (r: LiveRescale) => ({ rescale: r, pendingParallelism: { default: 4, operators: {} } });

  it('RUNNING with a pending parallelism goes RESCALING saying how the change is made', async () => {
    const actions = new FakeActions();
    actions.rescaleBegun = 'parallelism change requested: live rescale r1, 2 → 4 processes';
    const { next, calls } = await step('RUNNING', { run: old, job: seen('running'), d: { pendingParallelism: { default: 4, operators: {} } }, actions });
    expect(next).toEqual({ kind: 'transition', to: 'RESCALING', reason: 'parallelism change requested: live rescale r1, 2 → 4 processes' });
    expect(calls).toEqual(['begin rescale of 1']);
  });

  it('steps the rescale in flight while the run keeps running, then goes RUNNING on its report', async () => {
    const actions = new FakeActions();
    actions.liveSteps = [{ kind: 'stay', note: 'moving: 3 of 16', again: false }, { kind: 'running', reason: 'live rescale done' }];
    const moving = await step('RESCALING', { run: old, job: seen('changing'), d: d(rescale()), actions });
    expect(moving.next).toEqual({ kind: 'stay', note: 'moving: 3 of 16' });
    const done = await step('RESCALING', { run: old, job: seen('running'), d: d(rescale()), actions });
    expect(done.next).toEqual({ kind: 'transition', to: 'RUNNING', reason: 'live rescale done' });
    // Neither step stopped the run.
    expect(actions.calls).toEqual(['step r1 MOVING of 1', 'step r1 MOVING of 1']);
  });

  it('falls back to the restart when the step says so, the reason saying why', async () => {
    const actions = new FakeActions();
    actions.liveSteps = [{ kind: 'restart', reason: 'refused' }];
    const { next, calls } = await step('RESCALING', { run: old, job: seen('running'), d: d(rescale()), actions });
    expect(next).toEqual({ kind: 'stay', note: 'live rescale r1 fell back to a restart (refused); stopping run 1 on worker w1' });
    expect(calls).toEqual(['step r1 MOVING of 1', 'stop 1']);
    // The next looks (the rescale settled FELL_BACK meanwhile) carry on with the restart, still saying why.
    const fellBack = rescale({ state: 'FELL_BACK', reason: 'refused', finishedAt: later(2_000) });
    const later2 = await step('RESCALING', { run: { ...old, stopSentAt: later(1_500) }, job: seen('absent', 0), d: d(fellBack) });
    expect(later2.calls).toEqual(['end 1 REPLACED', 'place b1 p4 from latest', 'adopt parallelism']);
    expect(later2.next).toMatchObject({ kind: 'stay', note: expect.stringMatching(/^live rescale r1 fell back to a restart \(refused\); run 2 placed/) });
  });

  it('gives the rescale up and goes RECOVERING when a process is gone', async () => {
    const { next, calls } = await step('RESCALING', { run: old, job: gone, d: d(rescale()) });
    expect(next).toEqual({
      kind: 'transition',
      to: 'RECOVERING',
      reason: 'worker w1 is LOST (it hosted process 0 of run 1) during live rescale r1: re-placing the job at the new parallelism, restoring its latest checkpoint',
    });
    expect(calls).toEqual(['abandon r1: worker w1 is LOST (it hosted process 0 of run 1): the run is lost, and recovers at the new parallelism']);
  });

  it('gives the rescale up when the desired state changes, and stops', async () => {
    const { next, calls } = await step('RESCALING', { run: old, job: seen('running'), d: { ...d(rescale()), desiredState: 'SUSPENDED' } });
    expect(to(next)).toBe('STOPPING');
    expect(calls[0]).toBe('abandon r1: desired state SUSPENDED while it ran: the run stops');
  });
});

