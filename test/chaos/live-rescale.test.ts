/**
 * Live rescale of a run over the Kafka exchange while input flows and exactly-once checkpoints are taken every
 * 400 ms: two job hosts grow to four (two join owning nothing; process 0 moves key groups to them in small steps,
 * between checkpoints), then shrink back to two (everything moves off the retirees, one more checkpoint commits their
 * output, then they stop). Then every job host is killed and the run restarts from its latest checkpoint. The
 * committed output (read_committed) equals an uninterrupted run's, record by record.
 */
import { exchangeTopic, runControlTopic } from '@weir/engine';
import type { RescaleProgress } from '@weir/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointAfter, expectExactAfterRescaleAndRestart, inputFeed, totalsJobFixture } from './fixture';

const PARTITIONS = 2;
const RECORDS = 12_000;
const MAX_PARALLELISM = 32;

describe('live rescale of a run, exactly-once', () => {
  const job = totalsJobFixture('rescale', { input: PARTITIONS, output: 2 });

  afterAll(async () => {
    const admin = job.kafka.admin();
    await admin.deleteTopics([exchangeTopic(job.tenantId, job.jobId, 'totals'), runControlTopic(job.tenantId, job.jobId)]).catch(() => undefined);
    await admin.close();
  });

  const processOf = (runNo: number, index: number, count: number, routing?: number[]) =>
    job.start(runNo, {
      parallelism: { in: 2, totals: count },
      process: { index, count },
      subtasks: { in: [index], 'by-key': [index], totals: [index], out: [index] },
      runNo,
      ...(routing ? { routing: { totals: routing } } : {}),
    });

  it('grows 2 → 4 and shrinks 4 → 2 while input flows; a restart afterwards restores the latest checkpoint; output exact', async () => {
    const feed = await inputFeed(job, PARTITIONS);
    const produce = feed.produce;

    const hosts = await Promise.all([0, 1].map((i) => processOf(1, i, 2)));
    await produce(3_000);
    let flowing = produce(6_000);

    // Two processes join the run owning nothing (as the control plane starts them: sources at the old parallelism).
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
    expect(joiners.every((j) => j.subtasks.every((s) => s.operatorId !== 'in'))).toBe(true);
    const progress: RescaleProgress[] = [];
    const out = await hosts[0].rescale({ rescaleId: 'r1', processes: 4, parallelism: { totals: 4 } }, (p) => progress.push(p));
    expect(out.processes).toBe(4);
    expect(out.moved).toHaveLength(16);
    expect(out.moved.every((m) => m.toSubtask >= 2 && m.bytes > 0)).toBe(true);
    expect(out.parallelism).toMatchObject({ in: 2, totals: 4 });
    const owners = out.routing.totals;
    expect(owners).toHaveLength(MAX_PARALLELISM);
    expect([0, 1, 2, 3].map((s) => owners.filter((o) => o === s).length)).toEqual([8, 8, 8, 8]);
    expect(progress.at(-1)).toEqual({ moved: 16, total: 16 });
    await flowing;

    // The four processes take checkpoints together; then back to two.
    await checkpointAfter(hosts[0], hosts[0].latestCheckpoint?.checkpointId ?? 0);
    await expect(hosts[0].rescale({ rescaleId: 'r-too-far', processes: 1, parallelism: { totals: 1 } }, () => undefined)).rejects.toThrow(/source "in"/);
    flowing = produce(9_000);
    const back = await hosts[0].rescale({ rescaleId: 'r2', processes: 2, parallelism: { totals: 2 } }, () => undefined);
    expect(back.moved).toHaveLength(16);
    expect(back.moved.every((m) => m.fromSubtask >= 2 && m.toSubtask < 2)).toBe(true);
    expect(back.routing.totals.every((o) => o < 2)).toBe(true);
    await flowing;
    // The retirees own nothing and their output is committed; then a restart with the routing the rescale left.
    await expectExactAfterRescaleAndRestart(job, feed, { hosts, retirees: joiners }, () => Promise.all([0, 1].map((i) => processOf(2, i, 2, back.routing.totals))), {
      beforeKill: 10_000,
      total: RECORDS,
    });
  }, 300_000);
});
