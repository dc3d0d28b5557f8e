import { describe, expect, it } from 'vitest';
import { lifecycleSavepointsToDispose } from './lifecycle-savepoints';

describe('lifecycleSavepointsToDispose', () => {
  it('keeps the newest by run number, ignores tenant savepoints and protected ones', () => {
    const ids = ['sp-mine', 'suspend-run-2', 'upgrade-run-10', 'suspend-run-9', 'suspend-run-1', 'suspend-run-3', 'suspend-run-x'];
    // Newest three by run: upgrade-run-10, suspend-run-9, suspend-run-3.
    expect(lifecycleSavepointsToDispose(ids, new Set())).toEqual(['suspend-run-2', 'suspend-run-1']);
    expect(lifecycleSavepointsToDispose(ids, new Set(['suspend-run-2']))).toEqual(['suspend-run-1']);
    expect(lifecycleSavepointsToDispose(['suspend-run-1', 'sp-a'], new Set())).toEqual([]);
  });
});
