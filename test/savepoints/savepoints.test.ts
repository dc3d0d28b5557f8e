/**
 * Savepoints through real job hosts: stop-with-savepoint, restore at another parallelism (results equal to an
 * uninterrupted run), and a bundle whose operator ids changed (the dry run and the restore both name the state).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createBlobStore } from '@weir/blob';
import { CheckpointStore, checkRestore } from '@weir/checkpoint';
import { loadConfig } from '@weir/config';
import { sinkCommitsTopic } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { EXACTLY_ONCE, expectedOutput, inputRecords, type Output, readAll, removeJobData, sortOutputs, startJobHost, tempDir, writeBundle } from '../chaos/support';

const run = randomBytes(4).toString('hex');
const TENANT = `savepoints${run}`;
const JOB = 'totals';
const IN = `t.${TENANT}.in`;
const OUT = `t.${TENANT}.out`;
const RECORDS = 6_000;

describe('savepoints', () => {
  let kafka: KafkaConnector;
  let dir: string;
  let bundleV1: string;
  let bundleV2: string;
  const hosts: JobProcess[] = [];
  const blob = createBlobStore(loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' }));
  const store = new CheckpointStore(blob);
  let incarnation = 0;

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-test' });
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: IN, partitions: 2 }, { topic: OUT, partitions: 2 }]);
    await admin.close();
    dir = await tempDir();
    bundleV1 = await writeBundle(dir, IN, OUT);
    // v2 renamed the keyed operator: its state would be dropped.
    bundleV2 = await writeBundle(dir, IN, OUT, { keyed: 'totals-v2', sink: 'out' });
  });

  afterAll(async () => {
    for (const h of hosts) h.kill();
    const admin = kafka.admin();
    await admin.deleteTopics([IN, OUT, sinkCommitsTopic(TENANT, JOB), `weir.${TENANT}.${JOB}.dead-letters`]).catch(() => undefined);
    await admin.close();
    await removeJobData(TENANT, dir);
    blob.close();
  });

  const start = async (bundlePath: string, keyedParallelism: number, restoreFrom?: { snapshotId: string; location: string }, allowNonRestoredState?: boolean): Promise<JobProcess> => {
    const host = startJobHost({
      tenantId: TENANT,
      jobId: JOB,
      bundlePath,
      parallelism: { in: 2, totals: keyedParallelism, 'totals-v2': keyedParallelism },
      maxParallelism: 32,
      stateDir: join(dir, `state-${incarnation++}`),
      deadLetterTopic: `weir.${TENANT}.${JOB}.dead-letters`,
      checkpointing: EXACTLY_ONCE,
      ...(restoreFrom ? { restoreFrom } : {}),
      ...(allowNonRestoredState ? { allowNonRestoredState } : {}),
    });
    hosts.push(host);
    await host.run();
    return host;
  };

  it('stop-with-savepoint, then restore at another parallelism: results equal an uninterrupted run', async () => {
    const writer = kafka.writer({ writerId: `test-savepoints-${run}` });
    await writer.start();
    await writer.send(inputRecords(IN, 0, RECORDS / 2, 2));
    const first = await start(bundleV1, 2);
    // Everything of the first half is in before the savepoint: wait until its output is committed.
    const early = await readAll(kafka, OUT, 2, (n) => n >= RECORDS / 2, 20_000);
    expect(early.length).toBe(RECORDS / 2);

    const key = await first.stopWithSavepoint('sp-1');
    expect(first.state).toBe('FINISHED');
    // A retried trigger with the same id finds the savepoint and does not write a second one.
    const again = await store.savepoint({ tenantId: TENANT, jobId: JOB }, 'sp-1');
    expect(again?.key).toBe(key);

    await writer.send(inputRecords(IN, RECORDS / 2, RECORDS, 2));
    await writer.close();
    const second = await start(bundleV1, 3, { snapshotId: 'sp-1', location: key });
    expect(second.restored?.checkpointId).toBe(again!.manifest.checkpointId);
    const records = await readAll(kafka, OUT, 2, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    expect(outputs).toEqual(expectedOutput(RECORDS));
    await second.stop();
  }, 120_000);

  it('a bundle whose operator ids changed: the dry run names the dropped state, the restore refuses unless allowed', async () => {
    const savepoint = (await store.savepoint({ tenantId: TENANT, jobId: JOB }, 'sp-1'))!;
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
