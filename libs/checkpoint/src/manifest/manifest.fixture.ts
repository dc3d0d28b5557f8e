import type { CheckpointManifest } from './manifest';

/** A valid manifest for specs: two keyed subtasks (one shared file) and a source with offsets. */
export const sha = (c: string) => c.repeat(64);

export const sampleManifest: CheckpointManifest = {
  format: 'weir.checkpoint',
  version: 1,
  kind: 'checkpoint',
  checkpointId: 7,
  savepointId: null,
  tenantId: 't1',
  jobId: 'j1',
  createdAt: '2026-11-29T08:00:00.000Z',
  maxParallelism: 128,
  sharedPrefix: 'tenants/t1/jobs/j1/shared/',
  baseCheckpointId: 6,
  operators: [
    {
      operatorId: 'totals',
      subtasks: [
        {
          subtask: 0,
          keyGroups: [{ start: 0, end: 63 }],
          backend: 'lsm',
          files: [
            { name: '000009.sst', sha256: sha('a'), size: 1000 },
            { name: 'CURRENT', sha256: sha('b'), size: 16 },
          ],
          metadata: [{ name: 'timers', sha256: sha('c'), size: 10 }],
        },
        { subtask: 1, keyGroups: [{ start: 64, end: 127 }], backend: 'lsm', files: [{ name: '000010.sst', sha256: sha('a'), size: 1000 }], metadata: [] },
      ],
    },
    { operatorId: 'tx', subtasks: [{ subtask: 0, keyGroups: null, backend: null, files: [], metadata: [{ name: 'offsets', sha256: sha('d'), size: 20 }] }] },
  ],
  metadata: [],
  stats: { stateBytes: 1046, uploadedBytes: 46, uploadedFiles: 3, reusedFiles: 1 },
};

