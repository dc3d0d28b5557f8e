import { describe, expect, it } from 'vitest';
import { sampleManifest } from '../manifest/manifest.fixture';
import { checkRestore } from './check-restore';

describe('checkRestore', () => {
  it('is ok when every operator with state is still there at the same max parallelism', () => {
    expect(checkRestore(sampleManifest, { operatorIds: ['tx', 'totals', 'new-op'], maxParallelism: 128 })).toEqual({
      ok: true,
      dropped: [],
      unreadable: [],
    });
  });

  it('names the operators whose state the new job would drop', () => {
    const check = checkRestore(sampleManifest, { operatorIds: ['tx', 'totals-v2'], maxParallelism: 128 });
    expect(check).toEqual({ ok: false, dropped: ['totals'], unreadable: [] });
  });

  it('marks keyed state unreadable when the max parallelism changed, with the reason', () => {
    const check = checkRestore(sampleManifest, { operatorIds: ['tx', 'totals'], maxParallelism: 256 });
    expect(check.ok).toBe(false);
    expect(check.unreadable).toEqual([{ operatorId: 'totals', reason: expect.stringMatching(/max parallelism changed from 128 to 256/) }]);
    // Source offsets are not keyed: they restore at any max parallelism.
    expect(check.dropped).toEqual([]);
  });

  it('names the key groups a checkpoint lacks', () => {
    const partial = structuredClone(sampleManifest);
    partial.operators[0].subtasks[1].keyGroups = [{ start: 64, end: 99 }, { start: 101, end: 126 }];
    const check = checkRestore(partial, { operatorIds: ['tx', 'totals'], maxParallelism: 128 });
    expect(check.unreadable).toEqual([{ operatorId: 'totals', reason: 'the checkpoint lacks key groups 100, 127' }]);
  });
});
