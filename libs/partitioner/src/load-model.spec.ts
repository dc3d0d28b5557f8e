import { describe, expect, it } from 'vitest';
import { keyGroupOfKey } from '@weir/engine';
import { SubtaskMetrics, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { PartitionerInputError } from './errors';
import { loadModelFromSnapshots } from './load-model';
import { SplitRouter } from './split-router';
import { layoutOf, rangeOwners } from './test-support/load';

const MAXP = 32;
const n = 4;
const owners = rangeOwners(n, MAXP);

/** Routes `records` (key per record) through the layout's router into one SubtaskMetrics per subtask over 10 s. */
function snapshotsOf(records: readonly string[], layout = layoutOf(n, owners), busyShare = 0): SubtaskMetricsSnapshot[] {
  const router = SplitRouter.fromLayout(layout);
  const metrics = Array.from(
    { length: n },
    (_, subtask) =>
      new SubtaskMetrics({ identity: { tenantId: 't', jobId: 'j', operatorId: 'op', subtask }, maxParallelism: MAXP, nowMs: 0, heavyKeyExactRecords: 1_000_000 }),
  );
  records.forEach((key, i) => {
    const kg = keyGroupOfKey(key, MAXP);
    const s = router.route(key, kg, i);
    metrics[s].onBatchIn(1);
    metrics[s].offerKey(key, kg);
  });
  if (busyShare > 0) {
    for (const m of metrics) {
      m.enter('busy', 0);
      m.enter('idle', 10_000 * busyShare);
    }
  }
  const out = metrics.map((m) => m.snapshot(10_000, null));
  for (const m of metrics) m.close();
  return out;
}

function stream(): string[] {
  const records: string[] = [];
  for (let i = 0; i < 20_000; i++) records.push(i % 4 === 0 ? 'hot' : `k${i % 997}`);
  return records;
}

describe('loadModelFromSnapshots', () => {
  it('gives every key group its exact rate and the heavy keys theirs, in records/s', () => {
    const model = loadModelFromSnapshots(snapshotsOf(stream()), layoutOf(n, owners));
    expect(model.keyGroupRates.reduce((a, r) => a + r, 0)).toBeCloseTo(2000, 9);
    expect(model.keyRates[0]).toMatchObject({ key: 'hot', keyGroup: keyGroupOfKey('hot', MAXP), rate: 500 });
    expect(model.capacities).toEqual([null, null, null, null]);
    expect(model.stateBytes).toHaveLength(MAXP);
  });

  it('recovers a split key’s rate from the exact counts where it was spread', () => {
    const kg = keyGroupOfKey('hot', MAXP);
    const others = [0, 1, 2, 3].filter((s) => s !== owners[kg]);
    const layout = layoutOf(n, owners, [{ key: 'hot', keyGroup: kg, subtasks: [owners[kg], others[0], others[1]], weights: [0.2, 0.4, 0.4] }]);
    const model = loadModelFromSnapshots(snapshotsOf(stream(), layout), layout);
    const hot = model.keyRates.find((k) => k.key === 'hot');
    expect(hot?.rate).toBeCloseTo(500, 0);
    expect(hot?.error).toBe(0);
  });

  it('measures capacity as records ÷ busy time', () => {
    const model = loadModelFromSnapshots(snapshotsOf(stream(), layoutOf(n, owners), 0.5), layoutOf(n, owners));
    const snapshots = snapshotsOf(stream());
    snapshots.forEach((s, i) => expect(model.capacities[i]).toBeCloseTo(s.recordsInPerSec * 2, 6));
  });

  it('refuses a snapshot of a subtask the layout does not have', () => {
    const snapshots = snapshotsOf(stream());
    expect(() => loadModelFromSnapshots(snapshots, layoutOf(2, owners.map((o) => o % 2)))).toThrow(PartitionerInputError);
  });
});
