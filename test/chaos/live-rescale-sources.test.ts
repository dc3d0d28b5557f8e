/**
 * Live rescale of a run whose source grows with it: four input partitions, read by two source subtasks, then by four
 * (two joining processes start reading none; process 0 moves partitions 2 and 3 to them between checkpoints,
 * then key groups), then by two again (partitions and key groups move off the retirees, one more checkpoint commits
 * their output), while input flows and exactly-once checkpoints are taken every 400 ms. Then every job host is
 * killed and the run restarts from its latest checkpoint. The committed output (read_committed) equals an
 * uninterrupted run's, record by record.
 */
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { checkpointAfter, expectExactAfterRescaleAndRestart, inputFeed, totalsJobFixture } from './fixture';

const PARTITIONS = 4;
const RECORDS = 12_000;
const MAX_PARALLELISM = 32;

describe('live rescale of a run and its source, exactly-once', () => {
  const job = totalsJobFixture('rescalesrc', { input: PARTITIONS, output: 2 });

  afterAll(async () => {
    const admin = job.kafka.admin();
    await admin.deleteTopics([exchangeTopic(job.tenantId, job.jobId, 'totals'), runControlTopic(job.tenantId, job.jobId)]).catch(() => undefined);
    await admin.close();
  });

  const processOf = (runNo: number, index: number, count: number, routing?: number[]) =>
    job.start(runNo, {
      parallelism: { in: count, totals: count },
      process: { index, count },
      subtasks: { in: [index], 'by-key': [index], totals: [index], out: [index] },
      runNo,
      ...(routing ? { routing: { totals: routing } } : {}),
    });

  it('moves source partitions 2 → 4 → 2 subtasks with the key groups while input flows; output exact after a restart', async () => {
    const feed = await inputFeed(job, PARTITIONS);
    const produce = feed.produce;

    const hosts = await Promise.all([0, 1].map((i) => processOf(1, i, 2)));
    await produce(3_000);
    let flowing = produce(6_000, 300);

    // Two processes join as the control plane starts them: the new parallelism, the old one as `joining`.
    const joiners = await Promise.all(
      [2, 3].map((index) =>
        job.start(1, {
          parallelism: { in: 4, totals: 4 },
          process: { index, count: 4 },
          subtasks: { in: [index], 'by-key': [index], totals: [index], out: [index] },
          runNo: 1,
          joining: { parallelism: { in: 2, totals: 2 } },
          routing: { totals: Array.from({ length: MAX_PARALLELISM }, (_, kg) => (kg < MAX_PARALLELISM / 2 ? 0 : 1)) },
          restoreFrom: undefined,
        }),
      ),
    );
    // Each joiner runs its source subtask, reading nothing until partitions move to it.
    expect(joiners.map((j) => j.subtasks.filter((s) => s.operatorId === 'in').map((s) => s.subtask))).toEqual([[2], [3]]);
    const out = await hosts[0].rescale({ rescaleId: 'r1', processes: 4, parallelism: { in: 4, totals: 4 } }, () => undefined);
    expect(out.parallelism).toMatchObject({ in: 4, 'by-key': 4, totals: 4 });
    expect(out.moved).toHaveLength(16);
    await flowing;
    // The joiners' sources read their partitions (what they read reaches the output: checked exactly below).
    flowing = produce(7_500, 500);
    const reads = (j: JobProcess) => j.latestMetrics.some((m) => m.operatorId === 'in' && m.recordsIn > 0);
    const deadline = Date.now() + 20_000;
    while (!joiners.every(reads) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(joiners.every(reads)).toBe(true);
    await flowing;
    await checkpointAfter(hosts[0], hosts[0].latestCheckpoint?.checkpointId ?? 0);
    flowing = produce(9_000, 300);
    const back = await hosts[0].rescale({ rescaleId: 'r2', processes: 2, parallelism: { in: 2, totals: 2 } }, () => undefined);
    expect(back.parallelism).toMatchObject({ in: 2, totals: 2 });
    expect(back.routing.totals.every((o) => o < 2)).toBe(true);
    await flowing;
    // The retirees stop; then a restart, the source dealt over two again.
    await expectExactAfterRescaleAndRestart(job, feed, { hosts, retirees: joiners }, () => Promise.all([0, 1].map((i) => processOf(2, i, 2, back.routing.totals))), {
      beforeKill: 10_000,
      total: RECORDS,
    });
  }, 300_000);
});
