import type { CheckpointStore, JobScope } from '@weir/checkpoint';

/** The next checkpoint id: past every checkpoint and savepoint the job has, so ids (and sink epochs) only grow. */
export async function nextCheckpointId(store: CheckpointStore, scope: JobScope, restoredId: number | null): Promise<number> {
  let max = restoredId ?? 0;
  for (const ref of await store.list(scope)) {
    if (ref.kind === 'checkpoint') max = Math.max(max, ref.checkpointId);
    else max = Math.max(max, (await store.read(ref)).manifest.checkpointId);
  }
  return max + 1;
}
