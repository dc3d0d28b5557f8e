import { describe, expect, it } from 'vitest';
import { planRetention, type RetentionInput } from './plan-retention';

const HOUR = 3_600_000;
const policy = { keep: 2, safetyMarginMs: 60_000, abandonAfterMs: HOUR };
const now = 10 * HOUR;
const old = now - 2 * HOUR;

const checkpoint = (checkpointId: number, files: string[], lastModified = old) => ({
  checkpointId,
  key: `cp/${checkpointId}`,
  lastModified,
  files: new Set(files),
});
const file = (sha256: string, lastModified = old) => ({ sha256, key: `shared/${sha256}`, size: 10, lastModified });

function input(over: Partial<RetentionInput>): RetentionInput {
  return { now, markersListedAt: now, pending: [], checkpoints: [], savepoints: [], shared: [], ...over };
}

describe('planRetention', () => {
  it('keeps the last K checkpoints and savepoints, and deletes only files none of them references', () => {
    const plan = planRetention(
      input({
        checkpoints: [checkpoint(1, ['a', 'b']), checkpoint(2, ['a', 'c']), checkpoint(3, ['a', 'd'])],
        savepoints: [{ savepointId: 'sp', files: new Set(['b']) }],
        shared: ['a', 'b', 'c', 'd', 'orphan'].map((s) => file(s)),
      }),
      policy,
    );
    expect(plan.keptCheckpoints).toEqual([3, 2]);
    expect(plan.dropManifests).toEqual([{ checkpointId: 1, key: 'cp/1' }]);
    expect(plan.deleteFiles.map((f) => f.key)).toEqual(['shared/orphan']);
  });

  it('never deletes a file younger than the oldest live pending write', () => {
    const started = now - 30 * 60_000;
    const plan = planRetention(
      input({
        pending: [{ key: 'p/4', lastModified: started, marker: { startedAt: started, base: 3 } }],
        checkpoints: [checkpoint(3, ['a'])],
        shared: [file('a'), file('uploaded-by-4', started + 1000), file('stale', started - 2 * 60_000)],
      }),
      policy,
    );
    expect(plan.deleteFiles.map((f) => f.key)).toEqual(['shared/stale']);
  });

  it('keeps the base of a pending write even when it is older than the last K', () => {
    const plan = planRetention(
      input({
        pending: [{ key: 'p/9', lastModified: now - 1000, marker: { startedAt: now - 1000, base: 1 } }],
        checkpoints: [checkpoint(1, ['a']), checkpoint(2, ['b']), checkpoint(3, ['c'])],
        shared: [file('a'), file('b'), file('c')],
      }),
      policy,
    );
    expect(plan.keptCheckpoints).toEqual([3, 2, 1]);
    expect(plan.deleteFiles).toEqual([]);
  });

  it('drops nothing while a writer is still choosing its base', () => {
    const plan = planRetention(
      input({
        pending: [{ key: 'p/9', lastModified: now - 1000, marker: { startedAt: now - 1000, base: 'choosing' } }],
        checkpoints: [checkpoint(1, ['a']), checkpoint(2, ['b']), checkpoint(3, ['c'])],
        shared: [file('a'), file('b'), file('c'), file('orphan')],
      }),
      policy,
    );
    expect(plan.dropManifests).toEqual([]);
    expect(plan.deleteFiles.map((f) => f.key)).toEqual(['shared/orphan']);
    expect(plan.notes[0]).toMatch(/choosing its base/);
  });

  it('does not let checkpoints that completed after the markers were listed push older ones out', () => {
    const plan = planRetention(
      input({
        markersListedAt: now - 10 * 60_000,
        checkpoints: [checkpoint(1, ['a']), checkpoint(2, ['b']), checkpoint(3, ['c'], now - 1000), checkpoint(4, ['d'], now - 500)],
        shared: ['a', 'b', 'c', 'd'].map((s) => file(s)),
      }),
      policy,
    );
    expect(plan.keptCheckpoints).toEqual([4, 3, 2, 1]);
  });

  it('ignores and removes abandoned markers', () => {
    const plan = planRetention(
      input({
        pending: [{ key: 'p/dead', lastModified: now - 2 * HOUR, marker: { startedAt: now - 2 * HOUR, base: 'choosing' } }],
        checkpoints: [checkpoint(1, ['a']), checkpoint(2, ['b']), checkpoint(3, ['c'])],
        shared: [file('a'), file('b'), file('c')],
      }),
      policy,
    );
    expect(plan.deleteMarkers).toEqual(['p/dead']);
    expect(plan.dropManifests.map((m) => m.checkpointId)).toEqual([1]);
    expect(plan.deleteFiles.map((f) => f.key)).toEqual(['shared/a']);
  });

  it('deletes no file when a kept manifest cannot be read', () => {
    const plan = planRetention(
      input({
        checkpoints: [checkpoint(1, ['a']), { ...checkpoint(2, []), files: null }],
        shared: [file('a'), file('orphan')],
      }),
      policy,
    );
    expect(plan.deleteFiles).toEqual([]);
    expect(plan.notes.join()).toMatch(/checkpoint 2's manifest cannot be read/);
  });
});
