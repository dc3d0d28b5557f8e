/**
 * One job run spread over several job host processes (Kafka exchange between them, the run's checkpoints led by
 * process 0 over the job's control topic), exactly-once: one process SIGKILLed, then all of them (a worker's loss);
 * each time the whole run restarts from the latest checkpoint as the control plane does. Then stop-with-savepoint at
 * three processes restored into one, and at one restored into four. The committed output (read_committed) equals an
 * uninterrupted run's, record by record: nothing lost, nothing duplicated.
 */
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { totalsJobFixture } from './fixture';
import { expectedOutput, inputRecords, type Output, readAll, sortOutputs } from './support';

const PARTITIONS = 3;
const RECORDS = 16_000;
const BATCH = 500;

describe('a run over several job hosts, exactly-once', () => {
  const job = totalsJobFixture('multi', { input: PARTITIONS, output: 2 });

  afterAll(async () => {
    const admin = job.kafka.admin();
    await admin.deleteTopics([exchangeTopic(job.tenantId, job.jobId, 'totals'), runControlTopic(job.tenantId, job.jobId)]).catch(() => undefined);
    await admin.close();
  });

  /** Run `runNo` of the job in `count` processes, process i running subtask i of each stage. */
  const startRun = (runNo: number, count: number, restoreFrom?: { snapshotId: string; location: string }): Promise<JobProcess[]> =>
    Promise.all(
      Array.from({ length: count }, (_, index) =>
        job.start(runNo, {
          parallelism: { in: count, totals: count },
          process: { index, count },
          subtasks: { in: [index], 'by-key': [index], totals: [index], out: [index] },
          runNo,
          ...(restoreFrom ? { restoreFrom } : {}),
        }),
      ),
    );

  const checkpointPast = async (host: JobProcess, after: number): Promise<number> => {
    const deadline = Date.now() + 45_000;
    while ((host.latestCheckpoint?.checkpointId ?? 0) <= after) {
      if (Date.now() > deadline) throw new Error(`no checkpoint past ${after} within 45 s (state ${host.state}: ${host.failure ?? ''}, ${JSON.stringify(host.lastCheckpointFailure)})`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return host.latestCheckpoint!.checkpointId;
  };

  it('survives the loss of one process and of all, and savepoints restore at one and at four processes', async () => {
    const writer = job.kafka.writer({ writerId: `test-multi-in-${job.run}` });
    await writer.start();
    let produced = 0;
    const produce = async (upTo: number): Promise<void> => {
      while (produced < upTo) {
        const to = Math.min(upTo, produced + BATCH);
        await writer.send(inputRecords(job.input, produced, to, PARTITIONS));
        produced = to;
      }
    };
    const latest = { snapshotId: 'latest', location: `tenants/${job.tenantId}/jobs/${job.jobId}/` };
    const restores: number[] = [];

    // Run 1 over three processes; one of them dies without a word mid-run: the run is re-placed whole.
    let hosts = await startRun(1, 3);
    await produce(4_000);
    let checkpoint = await checkpointPast(hosts[0], 0);
    // Every process heard the checkpoint complete (and committed its sinks' epoch).
    for (const h of hosts) await checkpointPast(h, checkpoint - 1);
    await produce(6_000);
    hosts[1].kill();
    await hosts[1].exited;
    expect(hosts[1].state).toBe('LOST');
    for (const h of hosts) h.kill();
    await Promise.all(hosts.map((h) => h.exited));

    // Run 2 restores the latest checkpoint; then every process dies at once (a lost worker).
    hosts = await startRun(2, 3, latest);
    restores.push(...hosts.map((h) => h.restored?.checkpointId ?? 0));
    await produce(9_000);
    checkpoint = await checkpointPast(hosts[0], Math.max(...restores));
    await produce(10_000);
    await new Promise((r) => setTimeout(r, 200));
    for (const h of hosts) h.kill();
    await Promise.all(hosts.map((h) => h.exited));

    // Run 3: stop-with-savepoint over three processes (process 0 takes it; every process stops once it is on S3).
    hosts = await startRun(3, 3, latest);
    restores.push(...hosts.map((h) => h.restored?.checkpointId ?? 0));
    await produce(12_000);
    const toOne = await hosts[0].stopWithSavepoint('three-to-one');
    await Promise.all(hosts.map((h) => h.exited));
    expect(hosts.map((h) => h.state)).toEqual(['FINISHED', 'FINISHED', 'FINISHED']);

    // Run 4: that savepoint in one process; input flows on; another stop-with-savepoint.
    hosts = await startRun(4, 1, { snapshotId: 'three-to-one', location: toOne });
    await produce(14_000);
    const toFour = await hosts[0].stopWithSavepoint('one-to-four');
    await hosts[0].exited;

    // Run 5: into four processes (the source has three partitions: process 3 runs a keyed subtask only).
    hosts = await startRun(5, 4, { snapshotId: 'one-to-four', location: toFour });
    await produce(RECORDS);
    await writer.close();

    const records = await readAll(job.kafka, job.output, 2, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    const seen = new Set<string>();
    const duplicates = outputs.filter((o) => (seen.has(`${o.k}/${o.i}`) ? true : (seen.add(`${o.k}/${o.i}`), false)));
    const dupIds = duplicates.map((d) => d.i).sort((a, b) => a - b);
    expect(duplicates.slice(0, 5), `duplicated results: ${dupIds.length}, from ${dupIds[0]} to ${dupIds.at(-1)}`).toEqual([]);
    const got = new Set(outputs.map((o) => o.i));
    const missing = Array.from({ length: RECORDS }, (_, i) => i).filter((i) => !got.has(i));
    expect(missing.slice(0, 5), `missing ${missing.length}; restores ${JSON.stringify(restores)}`).toEqual([]);
    expect(outputs).toEqual(expectedOutput(RECORDS));
    // Each restart began from a checkpoint, never from scratch.
    expect(restores.every((id) => id > 0)).toBe(true);
    for (const h of hosts) await h.stop();
  }, 300_000);
});
