import { describe, expect, it } from 'vitest';
import { CheckpointCoordinator } from './checkpoint-coordinator';
import type { StageRuntime } from './stage-runtime';

/** One stage of two subtasks fed by a memory input that records the barriers it was given. */
function stage(barriers: number[]): StageRuntime {
  return {
    plan: { root: { kind: 'source' } },
    subtasks: [{ hasFinished: false }, { hasFinished: false }],
    pumps: [],
    memoryInputs: [{ barrier: (id: number) => barriers.push(id) }],
  } as unknown as StageRuntime;
}

describe('CheckpointCoordinator', () => {
  it('resolves once every subtask sent its part', async () => {
    const coordinator = new CheckpointCoordinator();
    const done = coordinator.trigger(1, [stage([])]);
    coordinator.onSnapshot(1, { stageId: 's', subtask: 0 });
    coordinator.onSnapshot(1, { stageId: 's', subtask: 1 });
    expect((await done).subtasks).toHaveLength(2);
  });

  it('lets a newer checkpoint supersede one still collecting (given up by its caller); late parts are ignored', async () => {
    const coordinator = new CheckpointCoordinator();
    const barriers: number[] = [];
    const stages = [stage(barriers)];
    const first = coordinator.trigger(1, stages);
    coordinator.onSnapshot(1, { stageId: 's', subtask: 0 });
    const second = coordinator.trigger(2, stages);
    await expect(first).rejects.toThrow(/checkpoint 1 was superseded by checkpoint 2/);
    coordinator.onSnapshot(1, { stageId: 's', subtask: 1 }); // the old cut completes late
    coordinator.onSnapshot(2, { stageId: 's', subtask: 0 });
    coordinator.onSnapshot(2, { stageId: 's', subtask: 1 });
    const snapshot = await second;
    expect(snapshot.checkpointId).toBe(2);
    expect(snapshot.subtasks).toHaveLength(2);
    expect(barriers).toEqual([1, 2]);
    void coordinator.trigger(3, stages).catch(() => undefined);
    await expect(coordinator.trigger(3, stages)).rejects.toThrow(/not newer/);
  });
});
