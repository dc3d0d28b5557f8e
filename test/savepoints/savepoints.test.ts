/**
 * Savepoints through real job hosts: stop-with-savepoint, restore at another parallelism (results equal to an
 * uninterrupted run), and a bundle whose operator ids changed (the dry run and the restore both name the state).
 */
import { createBlobStore } from '@weir/blob';
import { CheckpointStore, checkRestore } from '@weir/checkpoint';
import { loadConfig } from '@weir/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { expectedOutput, inputRecords, type Output, readAll, sortOutputs, writeBundle } from '../chaos/support';
import { totalsJobFixture } from '../chaos/fixture';

const RECORDS = 6_000;

describe('savepoints', () => {
  const job = totalsJobFixture('savepoints', { input: 2, output: 2 });
  let bundleV2: string;
  const blob = createBlobStore(loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' }));
  const store = new CheckpointStore(blob);
  let incarnation = 0;

  beforeAll(async () => {
    // v2 renamed the keyed operator: its state would be dropped.
    bundleV2 = await writeBundle(job.dir, job.input, job.output, { keyed: 'totals-v2', sink: 'out' });
  });

  afterAll(() => blob.close());

  const start = (bundlePath: string, keyedParallelism: number, restoreFrom?: { snapshotId: string; location: string }, allowNonRestoredState?: boolean): Promise<JobProcess> =>
    job.start(incarnation++, {
      bundlePath,
      parallelism: { in: 2, totals: keyedParallelism, 'totals-v2': keyedParallelism },
      ...(restoreFrom ? { restoreFrom } : {}),
      ...(allowNonRestoredState ? { allowNonRestoredState } : {}),
    });

  it('stop-with-savepoint, then restore at another parallelism: results equal an uninterrupted run', async () => {
    const { kafka } = job;
    const writer = kafka.writer({ writerId: `test-savepoints-${job.run}` });
    await writer.start();
    await writer.send(inputRecords(job.input, 0, RECORDS / 2, 2));
    const first = await start(job.bundlePath, 2);
    // Everything of the first half is in before the savepoint: wait until its output is committed.
    const early = await readAll(kafka, job.output, 2, (n) => n >= RECORDS / 2, 20_000);
    expect(early.length).toBe(RECORDS / 2);

    const key = await first.stopWithSavepoint('sp-1');
    expect(first.state).toBe('FINISHED');
    // A retried trigger with the same id finds the savepoint and does not write a second one.
    const again = await store.savepoint({ tenantId: job.tenantId, jobId: job.jobId }, 'sp-1');
    expect(again?.key).toBe(key);

    await writer.send(inputRecords(job.input, RECORDS / 2, RECORDS, 2));
    await writer.close();
    const second = await start(job.bundlePath, 3, { snapshotId: 'sp-1', location: key });
    expect(second.restored?.checkpointId).toBe(again!.manifest.checkpointId);
    const records = await readAll(kafka, job.output, 2, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    expect(outputs).toEqual(expectedOutput(RECORDS));
    await second.stop();
  }, 120_000);

  it('a bundle whose operator ids changed: the dry run names the dropped state, the restore refuses unless allowed', async () => {
    const savepoint = (await store.savepoint({ tenantId: job.tenantId, jobId: job.jobId }, 'sp-1'))!;
    const check = checkRestore(savepoint.manifest, { operatorIds: ['in', 'by-key', 'totals-v2', 'out'], maxParallelism: 32 });
    expect(check.ok).toBe(false);
    expect(check.dropped).toContain('totals');

    await expect(start(bundleV2, 2, { snapshotId: 'sp-1', location: savepoint.key })).rejects.toThrow(
      /holds state of operators this bundle does not have: totals .*allowNonRestoredState/,
    );
    const allowed = await start(bundleV2, 2, { snapshotId: 'sp-1', location: savepoint.key }, true);
    expect(allowed.state).toBe('RUNNING');
    await allowed.stop();
  }, 120_000);
});
