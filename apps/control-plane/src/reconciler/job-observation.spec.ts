import { describe, expect, it } from 'vitest';
import type { DeploymentRun } from '../deployments/deployment';
import { observeJob, type ObservedWorker } from './job-observation';

const run = { workerId: 'w1', runningAt: new Date(2_000) } as DeploymentRun;
const sub = (jobId: string, state: 'RUNNING' | 'STARTING' | 'FAILED', tenantId = 't1') => ({ tenantId, jobId, operatorId: 'op', subtask: 0, state });
const worker = (overrides: Partial<ObservedWorker> = {}): ObservedWorker => ({ id: 'w1', status: 'ALIVE', startedAt: new Date(1_000), runningSubtasks: [], ...overrides });

describe('observeJob', () => {
  it('sees only this tenant’s job on the worker', () => {
    const w = worker({ runningSubtasks: [sub('d1', 'RUNNING'), sub('d2', 'FAILED'), sub('d1', 'FAILED', 't2')] });
    expect(observeJob('t1', 'd1', run, w)).toEqual({ kind: 'running', workerId: 'w1', subtasks: 1 });
  });

  it('calls a job failed when any subtask failed, changing when some still start', () => {
    expect(observeJob('t1', 'd1', run, worker({ runningSubtasks: [sub('d1', 'RUNNING'), sub('d1', 'FAILED')] })).kind).toBe('failed');
    expect(observeJob('t1', 'd1', run, worker({ runningSubtasks: [sub('d1', 'RUNNING'), sub('d1', 'STARTING')] })).kind).toBe('changing');
  });

  it('reports a worker that is not ALIVE (or unknown) as gone', () => {
    expect(observeJob('t1', 'd1', run, worker({ status: 'LOST' }))).toEqual({ kind: 'worker-gone', workerId: 'w1', workerStatus: 'LOST' });
    expect(observeJob('t1', 'd1', run, null)).toEqual({ kind: 'worker-gone', workerId: 'w1', workerStatus: 'UNKNOWN' });
  });

  it('tells a restarted worker from a finished job', () => {
    expect(observeJob('t1', 'd1', run, worker({ startedAt: new Date(3_000) })).kind).toBe('worker-restarted');
    expect(observeJob('t1', 'd1', run, worker()).kind).toBe('absent');
  });

  it('has nothing to observe before the first run', () => {
    expect(observeJob('t1', 'd1', null, worker()).kind).toBe('no-run');
  });
});
