/**
 * Stop-with-savepoint emits nothing after the savepoint, through real job hosts with an at-least-once sink (which
 * writes each batch at once): input keeps arriving while the job stops with a savepoint, a new job host restores
 * it, and every input record's output (its key's running count and sum) appears exactly once. Without the sources
 * stopping at the savepoint's barrier, what the first job read between the barrier and its stop is written twice.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { sinkCommitsTopic } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { expectedOutput, inputRecords, type Output, readAll, removeJobData, sortOutputs, startJobHost, tempDir, writeBundle } from '../chaos/support';

const run = randomBytes(4).toString('hex');
const TENANT = `stopsp${run}`;
const JOB = 'totals';
const IN = `t.${TENANT}.in`;
const OUT = `t.${TENANT}.out`;
const RECORDS = 4_000;
const BATCH = 40;

describe('stop-with-savepoint with an at-least-once sink', () => {
  let kafka: KafkaConnector;
  let dir: string;
  let bundle: string;
  const hosts: JobProcess[] = [];

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-test' });
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: IN, partitions: 2 }, { topic: OUT, partitions: 2 }]);
    await admin.close();
    dir = await tempDir();
    bundle = await writeBundle(dir, IN, OUT);
  });

  afterAll(async () => {
    for (const h of hosts) h.kill();
    const admin = kafka.admin();
    await admin.deleteTopics([IN, OUT, sinkCommitsTopic(TENANT, JOB), `weir.${TENANT}.${JOB}.dead-letters`]).catch(() => undefined);
    await admin.close();
    await removeJobData(TENANT, dir);
  });

  const start = async (incarnation: number, restoreFrom?: { snapshotId: string; location: string }): Promise<JobProcess> => {
    const host = startJobHost({
      tenantId: TENANT,
      jobId: JOB,
      bundlePath: bundle,
      parallelism: { in: 2, totals: 2 },
      maxParallelism: 32,
      stateDir: join(dir, `state-${incarnation}`),
      deadLetterTopic: `weir.${TENANT}.${JOB}.dead-letters`,
      checkpointing: { intervalMs: 400, retain: 3, delivery: 'at-least-once' },
      ...(restoreFrom ? { restoreFrom } : {}),
    });
    hosts.push(host);
    await host.run();
    return host;
  };

  it('writes each output exactly once across the stop and the restore, though input flows throughout', async () => {
    const first = await start(0);
    const writer = kafka.writer({ writerId: `test-stopsp-${run}` });
    await writer.start();
    let sent = 0;
    // ~2,000 records/s on a fixed schedule, before, during and after the stop.
    const producing = (async () => {
      while (sent < RECORDS) {
        await writer.send(inputRecords(IN, sent, sent + BATCH, 2));
        sent += BATCH;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    while (sent < RECORDS / 3) await new Promise((resolve) => setTimeout(resolve, 20));

    const key = await first.stopWithSavepoint('sp-stop');
    expect(first.state).toBe('FINISHED');
    const stoppedAt = sent;
    const second = await start(1, { snapshotId: 'sp-stop', location: key });
    await producing;
    await writer.close();
    expect(stoppedAt).toBeLessThan(RECORDS); // the input really flowed across the stop

    const records = await readAll(kafka, OUT, 2, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    expect(outputs.length).toBe(RECORDS);
    expect(outputs).toEqual(expectedOutput(RECORDS));
    await second.stop();
  }, 120_000);
});
