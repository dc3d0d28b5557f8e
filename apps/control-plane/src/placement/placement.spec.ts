import { describe, expect, it } from 'vitest';
import { reportedSlots } from './fleet.repository';
import { PlacementArgumentError, shortageReason, spreadProcesses } from './placement';
import { planProcesses, planSubtasks, runParallelism, slotsFor, type PlacementBundle } from './subtask-plan';

const bundle: PlacementBundle = { id: 'b', key: 'k', sha256: 'x'.repeat(64), operatorIds: ['src', 'counts'], maxParallelism: 8 };

describe('spreadProcesses', () => {
  const workers = [
    { id: 'w3', slots: 4, slotsInUse: 0 },
    { id: 'w1', slots: 4, slotsInUse: 0 },
    { id: 'w2', slots: 8, slotsInUse: 7 },
  ];

  it('puts the processes on the worker with the most free slots first, lowest id on ties, several on one worker', () => {
    expect(spreadProcesses(workers, 2)).toEqual({ placed: true, workerIds: ['w1', 'w1'] });
    expect(spreadProcesses(workers, 1)).toEqual({ placed: true, workerIds: ['w1'] });
  });

  it('spills over to the next freest worker when one does not hold them all', () => {
    expect(spreadProcesses(workers, 5)).toEqual({ placed: true, workerIds: ['w1', 'w1', 'w1', 'w1', 'w3'] });
    expect(spreadProcesses(workers, 9)).toEqual({ placed: true, workerIds: ['w1', 'w1', 'w1', 'w1', 'w3', 'w3', 'w3', 'w3', 'w2'] });
    const uneven = [
      { id: 'a', slots: 2, slotsInUse: 0 },
      { id: 'b', slots: 3, slotsInUse: 0 },
    ];
    expect(spreadProcesses(uneven, 4)).toEqual({ placed: true, workerIds: ['b', 'b', 'b', 'a'] });
  });

  it('places nothing when the run is wider than the fleet’s free slots, saying how many are free where', () => {
    expect(spreadProcesses(workers, 10)).toEqual({ placed: false, needed: 10, free: 9, live: 3 });
    const full = [
      { id: 'w1', slots: 2, slotsInUse: 2 },
      { id: 'w2', slots: 2, slotsInUse: 5 }, // strays beyond its slots: none free, not negative
    ];
    expect(spreadProcesses(full, 1)).toEqual({ placed: false, needed: 1, free: 0, live: 2 });
    expect(spreadProcesses([], 1)).toEqual({ placed: false, needed: 1, free: 0, live: 0 });
    expect(() => spreadProcesses(workers, 0)).toThrow(PlacementArgumentError);
  });

  it('words the shortage', () => {
    expect(shortageReason({ needed: 4, free: 3, live: 2 })).toBe('waiting for 4 free slots: the fleet has 3 free on 2 live workers');
    expect(shortageReason({ needed: 1, free: 0, live: 1 })).toBe('waiting for 1 free slot: the fleet has 0 free on 1 live worker');
    expect(shortageReason({ needed: 2, free: 0, live: 0 })).toBe('waiting for 2 free slots: the fleet has no live worker');
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

describe('planProcesses', () => {
  it('gives process i subtask i of every operator wide enough, with planSubtasks\' key groups; one process per slot', () => {
    const parallelism = { default: 1, operators: { counts: 3 } };
    const processes = planProcesses(bundle, parallelism);
    expect(processes).toEqual([
      { index: 0, subtasks: [{ operatorId: 'src', subtask: 0, keyGroups: [[0, 7]] }, { operatorId: 'counts', subtask: 0, keyGroups: [[0, 2]] }] },
      { index: 1, subtasks: [{ operatorId: 'counts', subtask: 1, keyGroups: [[3, 5]] }] },
      { index: 2, subtasks: [{ operatorId: 'counts', subtask: 2, keyGroups: [[6, 7]] }] },
    ]);
    expect(processes).toHaveLength(slotsFor(bundle, parallelism));
    // Together they run every subtask once.
    expect(processes.flatMap((p) => p.subtasks).sort((a, b) => a.operatorId.localeCompare(b.operatorId) || a.subtask - b.subtask)).toEqual(
      planSubtasks(bundle, parallelism).sort((a, b) => a.operatorId.localeCompare(b.operatorId) || a.subtask - b.subtask),
    );
  });

  it('reads the whole run\'s parallelism back from its subtasks', () => {
    expect(runParallelism(planSubtasks(bundle, { default: 2, operators: { counts: 3 } }))).toEqual({ src: 2, counts: 3 });
  });
});

describe('reportedSlots', () => {
  const s = (jobId: string, operatorId: string, subtask: number, process?: number) => ({
    tenantId: 't', jobId, operatorId, subtask, state: 'RUNNING' as const, ...(process === undefined ? {} : { process }),
  });

  it('counts the widest operator of each job reported without process indexes (the whole job in one process)', () => {
    expect(reportedSlots([s('a', 'src', 0), s('a', 'w', 0), s('a', 'w', 1), s('b', 'src', 0)])).toBe(3);
  });

  it('counts one slot per process of a run spread over processes', () => {
    // Job a: processes 0 and 1 here (process 2 elsewhere); job b in one process.
    expect(reportedSlots([s('a', 'src', 0, 0), s('a', 'w', 0, 0), s('a', 'w', 1, 1), s('b', 'src', 0)])).toBe(3);
  });
});
