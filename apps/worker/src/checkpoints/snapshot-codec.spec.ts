import type { DownloadedCheckpoint } from '@weir/checkpoint';
import type { CheckpointSnapshot } from '@weir/engine';
import { describe, expect, it } from 'vitest';
import { fromDownloaded, rangesOf, toCheckpointParts } from './snapshot-codec';

const snapshot: CheckpointSnapshot = {
  checkpointId: 7,
  subtasks: [
    { stageId: 'in', subtask: 0, sourcePositions: { 'tx:0': '120', 'tx:2': '7' } },
    { stageId: 'totals', subtask: 1, keyGroups: new Map([[4, Buffer.from('four')], [5, Buffer.from('five')]]), operatorState: { broadcast: [['r1', { limit: 3 }]] } },
  ],
  sinkEpochs: [{ sinkId: 'out', subtask: 0, checkpointId: 7, topic: 'o', records: [{ key: Buffer.from('k'), value: Buffer.from('v'), timestamp: 5 }] }],
};

/** What libs/checkpoint hands back for the parts it was given (files aside). */
function downloaded(parts: ReturnType<typeof toCheckpointParts>): DownloadedCheckpoint {
  return {
    manifest: { checkpointId: 7 } as DownloadedCheckpoint['manifest'],
    metadata: {},
    parts: parts.map((p) => ({
      operatorId: p.operatorId,
      subtask: p.subtask,
      keyGroups: p.keyGroups ? (p.keyGroups as { start: number; end: number }[]) : null,
      state: null,
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
    })),
  };
}

describe('snapshot codec', () => {
  it('stores one blob per key group (so unchanged key groups are not uploaded again) and the owned ranges', () => {
    const parts = toCheckpointParts(snapshot, (stage, subtask) => (stage === 'totals' && subtask === 1 ? [4, 5, 6, 9] : null));
    const keyed = parts.find((p) => p.operatorId === 'totals')!;
    expect(Object.keys(keyed.metadata!).sort()).toEqual(['kg-4', 'kg-5', 'operator-state']);
    expect(keyed.keyGroups).toEqual([{ start: 4, end: 6 }, { start: 9, end: 9 }]);
    expect(parts.find((p) => p.operatorId === 'in')!.keyGroups).toBeUndefined();
    expect(parts.find((p) => p.operatorId === 'out')!.metadata).toHaveProperty('sink-epoch');
  });

  it('round-trips positions, key-group images, broadcast state and sink epochs', () => {
    const decoded = fromDownloaded(downloaded(toCheckpointParts(snapshot, () => [4, 5])));
    expect(decoded.snapshot.checkpointId).toBe(7);
    const source = decoded.snapshot.subtasks.find((s) => s.stageId === 'in')!;
    expect(source.sourcePositions).toEqual({ 'tx:0': '120', 'tx:2': '7' });
    const keyed = decoded.snapshot.subtasks.find((s) => s.stageId === 'totals')!;
    expect([...keyed.keyGroups!.entries()].map(([kg, b]) => [kg, Buffer.from(b).toString()])).toEqual([[4, 'four'], [5, 'five']]);
    expect(keyed.operatorState).toEqual({ broadcast: [['r1', { limit: 3 }]] });
    expect(decoded.snapshot.subtasks.some((s) => s.stageId === 'out')).toBe(false);
    expect(decoded.sinkEpochs).toHaveLength(1);
    expect(Buffer.from(decoded.sinkEpochs[0].records[0].value).toString()).toBe('v');
  });

  it('turns key groups into sorted inclusive ranges', () => {
    expect(rangesOf([9, 1, 2, 3, 7])).toEqual([{ start: 1, end: 3 }, { start: 7, end: 7 }, { start: 9, end: 9 }]);
    expect(rangesOf([])).toEqual([]);
  });
});
