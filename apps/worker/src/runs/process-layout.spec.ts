import { describe, expect, it } from 'vitest';
import { localSubtasks, ownsSinkEpoch } from './process-layout';

describe('process layout', () => {
  it('names every stage, so a stage this process has no subtask of runs none here', () => {
    expect(localSubtasks({ src: 2, totals: 4 }, { totals: [3] })).toEqual({ src: [], totals: [3] });
  });

  it('gives every restored sink epoch exactly one committer', () => {
    const layout = (index: number) => ({ index, count: 2 });
    for (const subtask of [0, 1, 2, 3]) {
      const owners = [0, 1].filter((i) => ownsSinkEpoch(layout(i), subtask));
      expect(owners).toHaveLength(1);
    }
    expect(ownsSinkEpoch(layout(0), 3)).toBe(true); // no process runs subtask 3 at parallelism 2
  });
});
