import type { RunningSubtask } from '@weir/protocol';
import { describe, expect, it } from 'vitest';
import type { DeploymentRun, RunProcessLayout } from '../deployments/deployment';
import { observeJob, type ObservedWorker } from './job-observation';

type State = RunningSubtask['state'];
const planned = (subtask: number, operatorId = 'op') => ({ operatorId, subtask, keyGroups: [] });
/** A run in one process on w1 running subtask 0 of `op`. */
const run = { runNo: 1, workerId: 'w1', runningAt: new Date(2_000), processes: [{ index: 0, workerId: 'w1', subtasks: [planned(0)] }] } as unknown as DeploymentRun;
const sub = (jobId: string, state: State, tenantId = 't1', extra: Partial<RunningSubtask> = {}): RunningSubtask => ({ tenantId, jobId, operatorId: 'op', subtask: 0, state, ...extra });
const worker = (overrides: Partial<ObservedWorker> = {}): ObservedWorker => ({ id: 'w1', status: 'ALIVE', startedAt: new Date(1_000), runningSubtasks: [], ...overrides });
const fleet = (...workers: ObservedWorker[]) => new Map(workers.map((w) => [w.id, w]));
const P0 = { process: 0, workerId: 'w1' };

describe('observeJob, a run in one process', () => {
  it('sees only this tenant’s job on the worker', () => {
    const w = worker({ runningSubtasks: [sub('d1', 'RUNNING'), sub('d2', 'FAILED'), sub('d1', 'FAILED', 't2')] });
    expect(observeJob('t1', 'd1', run, fleet(w))).toEqual({ kind: 'running', subtasks: 1, reporting: [P0], notRunning: [] });
  });

  it('calls a job failed when any subtask failed, changing when some still start', () => {
    expect(observeJob('t1', 'd1', run, fleet(worker({ runningSubtasks: [sub('d1', 'RUNNING'), sub('d1', 'FAILED')] })))).toMatchObject({ kind: 'failed', ...P0 });
    expect(observeJob('t1', 'd1', run, fleet(worker({ runningSubtasks: [sub('d1', 'RUNNING'), sub('d1', 'STARTING')] }))).kind).toBe('changing');
  });

  it('carries the reason a failed subtask gives', () => {
    const failing = worker({ runningSubtasks: [sub('d1', 'FAILED', 't1', { failure: 'heap limit' }), sub('d1', 'FAILED', 't1', { subtask: 1 })] });
    expect(observeJob('t1', 'd1', run, fleet(failing))).toMatchObject({ kind: 'failed', failure: 'heap limit' });
  });

  it('reports a process whose worker is not ALIVE (or unknown) as gone, with the worker’s status', () => {
    expect(observeJob('t1', 'd1', run, fleet(worker({ status: 'LOST' })))).toEqual({
      kind: 'process-gone', ...P0, cause: { kind: 'worker-not-alive', workerStatus: 'LOST' }, reporting: [],
    });
    expect(observeJob('t1', 'd1', run, fleet())).toMatchObject({ kind: 'process-gone', cause: { kind: 'worker-not-alive', workerStatus: 'UNKNOWN' } });
  });

  it('tells a restarted worker from a finished job', () => {
    expect(observeJob('t1', 'd1', run, fleet(worker({ startedAt: new Date(3_000) })))).toMatchObject({ kind: 'process-gone', cause: { kind: 'worker-restarted' } });
    expect(observeJob('t1', 'd1', run, fleet(worker())).kind).toBe('absent');
  });

  it('takes a LOST subtask (its job host died unreported) for a gone process, not a failure', () => {
    const w = worker({ runningSubtasks: [sub('d1', 'LOST')] });
    expect(observeJob('t1', 'd1', run, fleet(w))).toEqual({ kind: 'process-gone', ...P0, cause: { kind: 'job-host-lost' }, reporting: [] });
  });

  it('has nothing to observe before the first run', () => {
    expect(observeJob('t1', 'd1', null, fleet(worker())).kind).toBe('no-run');
  });
});

describe('observeJob, a run in three processes on two workers', () => {
  // Process i runs subtask i of `op` (parallelism 3) and, for i = 0, subtask 0 of `src` (parallelism 1).
  const processes: RunProcessLayout[] = [
    { index: 0, workerId: 'w1', subtasks: [planned(0, 'src'), planned(0)] },
    { index: 1, workerId: 'w1', subtasks: [planned(1)] },
    { index: 2, workerId: 'w2', subtasks: [planned(2)] },
  ];
  const wide = { ...run, processes } as DeploymentRun;
  const at = (process: number, subtask: number, state: State, operatorId = 'op') => sub('d1', state, 't1', { process, subtask, operatorId });
  const all = (state: State) => ({
    w1: [at(0, 0, state, 'src'), { ...at(0, 0, state), process: undefined }, at(1, 1, state)],
    w2: [at(2, 2, state)],
  });
  const both = (w1: RunningSubtask[], w2: RunningSubtask[], w2Status: ObservedWorker['status'] = 'ALIVE') =>
    fleet(worker({ runningSubtasks: w1 }), worker({ id: 'w2', status: w2Status, runningSubtasks: w2 }));
  const refs = { p0: { process: 0, workerId: 'w1' }, p1: { process: 1, workerId: 'w1' }, p2: { process: 2, workerId: 'w2' } };

  it('is running only when every process reports its subtasks, all RUNNING (absent process index: 0)', () => {
    const { w1, w2 } = all('RUNNING');
    expect(observeJob('t1', 'd1', wide, both(w1, w2))).toEqual({ kind: 'running', subtasks: 4, reporting: [refs.p0, refs.p1, refs.p2], notRunning: [] });
    // A job host reports its stages, not the operators chained into them: process 0 without `src` still runs.
    expect(observeJob('t1', 'd1', wide, both(w1.slice(1), w2)).kind).toBe('running');
    // One subtask still starting holds the run back.
    expect(observeJob('t1', 'd1', wide, both([...w1.slice(1), at(0, 0, 'STARTING', 'src')], w2)).kind).toBe('changing');
    // Process 2 not reporting yet: still changing, and it is named.
    expect(observeJob('t1', 'd1', wide, both(w1, []))).toEqual({ kind: 'changing', subtasks: 3, reporting: [refs.p0, refs.p1], notRunning: [refs.p2] });
    // A subtask reported by the wrong process does not count for the process that should run it.
    expect(observeJob('t1', 'd1', wide, both(w1, [at(1, 2, 'RUNNING')])).kind).toBe('changing');
  });

  it('is failed when any process reports FAILED, naming that process', () => {
    const { w1 } = all('RUNNING');
    expect(observeJob('t1', 'd1', wide, both(w1, [at(2, 2, 'FAILED')]))).toMatchObject({ kind: 'failed', ...refs.p2, subtasks: 4 });
  });

  it('is gone when one process’s worker is gone, listing the survivors still reporting', () => {
    const { w1, w2 } = all('RUNNING');
    expect(observeJob('t1', 'd1', wide, both(w1, w2, 'LOST'))).toEqual({
      kind: 'process-gone', ...refs.p2, cause: { kind: 'worker-not-alive', workerStatus: 'LOST' }, reporting: [refs.p0, refs.p1],
    });
  });

  it('is gone when one process’s job host is LOST, the others running', () => {
    const { w1 } = all('RUNNING');
    expect(observeJob('t1', 'd1', wide, both(w1, [at(2, 2, 'LOST')]))).toEqual({ kind: 'process-gone', ...refs.p2, cause: { kind: 'job-host-lost' }, reporting: [refs.p0, refs.p1] });
  });

  it('is gone when a worker restarted without its processes after the run ran', () => {
    const { w1 } = all('RUNNING');
    const restarted = fleet(worker({ runningSubtasks: w1 }), worker({ id: 'w2', startedAt: new Date(3_000) }));
    expect(observeJob('t1', 'd1', wide, restarted)).toMatchObject({ kind: 'process-gone', ...refs.p2, cause: { kind: 'worker-restarted' } });
  });

  it('is absent only when no process reports anything', () => {
    expect(observeJob('t1', 'd1', wide, both([], []))).toMatchObject({ kind: 'absent', subtasks: 0, reporting: [] });
    expect(observeJob('t1', 'd1', wide, both([], [at(2, 2, 'STOPPING')]))).toMatchObject({ kind: 'changing', reporting: [refs.p2] });
  });
});

describe('observeJob, a run that processes are joining by a live rescale', () => {
  // Process 0 on w1 ran since 2 000; process 1 joined at 5 000 on w2, a worker started at 4 000 (added to make room).
  const joined = {
    ...run,
    processes: [
      { index: 0, workerId: 'w1', subtasks: [planned(0)] },
      { index: 1, workerId: 'w2', subtasks: [planned(1)], joinedBy: 'r1', joinedAt: new Date(5_000).toISOString() },
    ],
  } as DeploymentRun;
  const p0 = sub('d1', 'RUNNING', 't1', { process: 0 });

  it('takes a joiner not reporting yet for one still starting, not for a restart that lost it', () => {
    const observed = observeJob('t1', 'd1', joined, fleet(worker({ runningSubtasks: [p0] }), worker({ id: 'w2', startedAt: new Date(4_000) })));
    expect(observed).toEqual({ kind: 'changing', subtasks: 1, reporting: [P0], notRunning: [{ process: 1, workerId: 'w2' }] });
  });

  it('still calls a joiner gone when its worker restarted after it joined, or is not alive', () => {
    const restarted = fleet(worker({ runningSubtasks: [p0] }), worker({ id: 'w2', startedAt: new Date(6_000) }));
    expect(observeJob('t1', 'd1', joined, restarted)).toMatchObject({ kind: 'process-gone', process: 1, cause: { kind: 'worker-restarted' } });
    const lost = fleet(worker({ runningSubtasks: [p0] }), worker({ id: 'w2', status: 'LOST' }));
    expect(observeJob('t1', 'd1', joined, lost)).toMatchObject({ kind: 'process-gone', process: 1, cause: { kind: 'worker-not-alive' } });
  });
});
