import type { CheckpointManifest } from '@weir/checkpoint';
import { describe, expect, it } from 'vitest';
import { stateBytesFromManifest } from './state-bytes';

const sha = (c: string) => c.repeat(64);

function manifest(operators: CheckpointManifest['operators'], maxParallelism = 8): CheckpointManifest {
  return {
    format: 'weir.checkpoint',
    version: 1,
    kind: 'checkpoint',
    checkpointId: 12,
    savepointId: null,
    tenantId: 't1',
    jobId: 'd1',
    createdAt: '2026-01-01T00:00:00.000Z',
    maxParallelism,
    sharedPrefix: 'tenants/t1/jobs/d1/shared',
    baseCheckpointId: null,
    operators,
    metadata: [],
    stats: { stateBytes: 0, uploadedBytes: 0, uploadedFiles: 0, reusedFiles: 0 },
  };
}

describe('state bytes per key group from a checkpoint manifest', () => {
  it("spreads each subtask's files and metadata evenly over the key groups it covers, moved ranges included", () => {
    const m = manifest([
      { operatorId: 'src', subtasks: [{ subtask: 0, keyGroups: null, backend: null, files: [], metadata: [{ name: 'offsets', sha256: sha('d'), size: 20 }] }] },
      {
        operatorId: 'counts',
        subtasks: [
          { subtask: 0, keyGroups: [{ start: 0, end: 2 }], backend: 'lsm', files: [{ name: '000009.sst', sha256: sha('a'), size: 900 }], metadata: [{ name: 'timers', sha256: sha('c'), size: 300 }] },
          { subtask: 1, keyGroups: [{ start: 3, end: 3 }, { start: 5, end: 7 }], backend: 'lsm', files: [{ name: '000010.sst', sha256: sha('b'), size: 400 }], metadata: [] },
        ],
      },
    ]);
    expect(stateBytesFromManifest(m, 'counts', 8)).toEqual({
      bytes: [400, 400, 400, 100, 0, 100, 100, 100],
      source: "checkpoint 12: each subtask's state spread evenly over its key groups",
    });
  });

  it('knows nothing of an operator without keyed state, one it does not list, or another key-group count', () => {
    const m = manifest([{ operatorId: 'src', subtasks: [{ subtask: 0, keyGroups: null, backend: null, files: [], metadata: [] }] }]);
    expect(stateBytesFromManifest(m, 'src', 8)).toBeNull();
    expect(stateBytesFromManifest(m, 'counts', 8)).toBeNull();
    expect(stateBytesFromManifest(manifest([], 16), 'counts', 8)).toBeNull();
  });
});
