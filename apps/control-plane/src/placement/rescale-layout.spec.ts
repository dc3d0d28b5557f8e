import type { RescaleReport } from '@weir/protocol';
import { describe, expect, it } from 'vitest';
import type { RunProcessLayout } from '../deployments/deployment';
import { joinerPlans, layoutAfterRescale, liveRescaleRefusal, rescaledParallelism, type RescaledRun } from './rescale-layout';
import { contiguousOwners } from './routing';
import { planProcesses, type PlacementBundle } from './subtask-plan';

// A source at 2 and a keyed operator `counts` over 8 key groups.
const bundle: PlacementBundle = { id: 'b', key: 'k', sha256: 'x'.repeat(64), operatorIds: ['src', 'counts'], maxParallelism: 8 };
const at = (counts: number, src = 2) => ({ default: 1, operators: { src, counts } });

function runAt(counts: number, workers: string[]): RescaledRun {
  const routing = { src: contiguousOwners(2, 8), counts: contiguousOwners(counts, 8) };
  const processes: RunProcessLayout[] = planProcesses(bundle, at(counts), routing).map((p) => ({ index: p.index, workerId: workers[p.index], subtasks: p.subtasks }));
  return { processes, subtasks: processes.flatMap((p) => p.subtasks), routing };
}

describe('liveRescaleRefusal', () => {
  it('refuses a run in one process and a change down to one; allows the rest', () => {
    expect(liveRescaleRefusal(1, 4)).toMatch(/the run is in one process/);
    expect(liveRescaleRefusal(3, 1)).toMatch(/new parallelism runs in one process/);
    expect(liveRescaleRefusal(2, 4)).toBeNull();
    expect(liveRescaleRefusal(4, 2)).toBeNull();
  });
});

describe('joinerPlans', () => {
  it('plans the processes from the old count up at the new parallelism, owning no key groups yet', () => {
    const joiners = joinerPlans(bundle, runAt(2, ['w1', 'w2']), at(4, 4));
    expect(joiners.map((p) => p.index)).toEqual([2, 3]);
    expect(joiners[0].subtasks).toEqual([
      { operatorId: 'src', subtask: 2, keyGroups: [] },
      { operatorId: 'counts', subtask: 2, keyGroups: [] },
    ]);
  });

  it('has none scaling in', () => {
    expect(joinerPlans(bundle, runAt(4, ['w1', 'w1', 'w2', 'w2']), at(2))).toEqual([]);
  });

  it('says the rescaled run’s parallelism per operator', () => {
    expect(rescaledParallelism(bundle, { default: 4, operators: {} })).toEqual({ src: 4, counts: 4 });
  });
});

describe('layoutAfterRescale', () => {
  const out = (owners: number[]): RescaleReport => ({ rescaleId: 'r1', processes: 4, parallelism: { src: 2, counts: 4 }, routing: { counts: owners }, moved: [], durationMs: 5 });

  it('lays a run scaled out over the joiners as the report routes it, sources keeping theirs', () => {
    const before = runAt(2, ['w1', 'w2']);
    const joined: RescaledRun = { ...before, processes: [...before.processes, ...[2, 3].map((index) => ({ index, workerId: 'w3', subtasks: [], joinedBy: 'r1', joinedAt: 'x' }))] };
    const owners = [0, 0, 1, 1, 2, 2, 3, 3];
    const layout = layoutAfterRescale(bundle, joined, out(owners));
    if (typeof layout === 'string') throw new Error(layout);
    expect(layout.routing).toEqual({ src: contiguousOwners(2, 8), counts: owners });
    expect(layout.retirees).toEqual([]);
    expect(layout.processes.map((p) => [p.index, p.workerId, p.joinedBy, p.subtasks.map((s) => `${s.operatorId}/${s.subtask}:${JSON.stringify(s.keyGroups)}`)])).toEqual([
      [0, 'w1', undefined, ['src/0:[[0,3]]', 'counts/0:[[0,1]]']],
      [1, 'w2', undefined, ['src/1:[[4,7]]', 'counts/1:[[2,3]]']],
      [2, 'w3', 'r1', ['counts/2:[[4,5]]']],
      [3, 'w3', 'r1', ['counts/3:[[6,7]]']],
    ]);
    expect(layout.subtasks).toHaveLength(6);
  });

  it('retires the processes from the new count up, scaling in', () => {
    const before = runAt(4, ['w1', 'w1', 'w2', 'w2']);
    const report = { ...out([0, 0, 0, 0, 1, 1, 1, 1]), processes: 2, parallelism: { src: 2, counts: 2 } };
    const layout = layoutAfterRescale(bundle, before, report);
    if (typeof layout === 'string') throw new Error(layout);
    expect(layout.processes.map((p) => p.index)).toEqual([0, 1]);
    expect(layout.retirees.map((p) => p.index)).toEqual([2, 3]);
    expect(layout.processes[1].subtasks.find((s) => s.operatorId === 'counts')?.keyGroups).toEqual([[4, 7]]);
  });

  it('says why a report cannot be the run’s layout', () => {
    const before = runAt(2, ['w1', 'w2']);
    expect(layoutAfterRescale(bundle, before, out([0, 0, 1, 1, 2, 2, 3, 3]))).toBe('it names 4 processes, and the run has 2');
    const joined: RescaledRun = { ...before, processes: [...before.processes, { index: 2, workerId: 'w3', subtasks: [] }, { index: 3, workerId: 'w3', subtasks: [] }] };
    expect(layoutAfterRescale(bundle, joined, out([0, 0, 1, 1, 2, 2, 3, 4]))).toMatch(/key group 7 of "counts" to subtask 4/);
    expect(layoutAfterRescale(bundle, joined, out([0, 1]))).toMatch(/routes 2 key groups of "counts", not 8/);
    expect(layoutAfterRescale(bundle, joined, { ...out([0, 0, 1, 1, 2, 2, 2, 2]), parallelism: { src: 2, counts: 3 } })).toMatch(/runs in 3 processes, and it names 4/);
  });
});
