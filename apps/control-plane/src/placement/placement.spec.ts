import { describe, expect, it } from 'vitest';
import { reportedSlots } from './fleet.repository';
import { chooseWorker } from './placement';
import { planSubtasks, slotsFor, type PlacementBundle } from './subtask-plan';

const bundle: PlacementBundle = { id: 'b', key: 'k', sha256: 'x'.repeat(64), operatorIds: ['src', 'counts'], maxParallelism: 8 };

describe('chooseWorker', () => {
  it('picks the worker with the most free slots that fits, lowest id on ties', () => {
    const workers = [
      { id: 'w3', slots: 4, slotsInUse: 0 },
      { id: 'w1', slots: 4, slotsInUse: 0 },
      { id: 'w2', slots: 8, slotsInUse: 7 },
    ];
    expect(chooseWorker(workers, 2)).toEqual({ workerId: 'w1', freeSlots: 4 });
    expect(chooseWorker(workers, 5)).toBeNull();
    expect(chooseWorker([], 1)).toBeNull();
  });
});

describe('planSubtasks', () => {
  it('gives every subtask its contiguous key-group range, covering all key groups once per operator', () => {
    const plan = planSubtasks(bundle, { default: 1, operators: { counts: 3 } });
    expect(plan).toEqual([
      { operatorId: 'src', subtask: 0, keyGroups: [[0, 7]] },
      { operatorId: 'counts', subtask: 0, keyGroups: [[0, 2]] },
      { operatorId: 'counts', subtask: 1, keyGroups: [[3, 5]] },
      { operatorId: 'counts', subtask: 2, keyGroups: [[6, 7]] },
    ]);
  });

  it('costs the widest operator in slots', () => {
    expect(slotsFor(bundle, { default: 1, operators: { counts: 3 } })).toBe(3);
    expect(slotsFor(bundle, { default: 2, operators: {} })).toBe(2);
  });
});

describe('reportedSlots', () => {
  it('counts the widest operator of each reported job', () => {
    const s = (jobId: string, operatorId: string, subtask: number) => ({ tenantId: 't', jobId, operatorId, subtask, state: 'RUNNING' as const });
    expect(reportedSlots([s('a', 'src', 0), s('a', 'w', 0), s('a', 'w', 1), s('b', 'src', 0)])).toBe(3);
  });
});
