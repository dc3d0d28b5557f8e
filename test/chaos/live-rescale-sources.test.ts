/**
 * Live rescale of a run whose source grows with it: four input partitions, read by two source subtasks, then by four
 * (two joining processes start reading none; process 0 moves partitions 2 and 3 to them between checkpoints,
 * then key groups), then by two again (partitions and key groups move off the retirees, one more checkpoint commits
 * their output), while input flows and exactly-once checkpoints are taken every 400 ms. Then every job host is
 * killed and the run restarts from its latest checkpoint. The committed output (read_committed) equals an
 * uninterrupted run's, record by record.
 */
import { join } from 'node:path';
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { expectExactTotals, totalsJobFixture } from './fixture';
import { inputRecords } from './support';

const PARTITIONS = 4;
const RECORDS = 12_000;
const BATCH = 500;
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
      stateDir: join(job.dir, `run-${runNo}-p${index}-of-${count}`),
      ...(routing ? { routing: { totals: routing } } : {}),
    });

  it('moves source partitions 2 → 4 → 2 subtasks with the key groups while input flows; output exact after a restart', async () => {
    const writer = job.kafka.writer({ writerId: `test-rescalesrc-in-${job.run}` });
    await writer.start();
    let produced = 0;
    /** Paced (`perSecond`), input keeps flowing while partitions and key groups move. */
    const produce = async (upTo: number, perSecond?: number): Promise<void> => {
      const batch = perSecond ? Math.max(1, Math.round(perSecond / 10)) : BATCH;
      while (produced < upTo) {
        const to = Math.min(upTo, produced + batch);
        await writer.send(inputRecords(job.input, produced, to, PARTITIONS));
        produced = to;
        if (perSecond) await new Promise((r) => setTimeout(r, 100));
      }
    };
    const checkpointAfter = async (host: JobProcess, id: number): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while ((host.latestCheckpoint?.checkpointId ?? 0) <= id && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(host.latestCheckpoint?.checkpointId ?? 0).toBeGreaterThan(id);
    };

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
          stateDir: join(job.dir, `run-1-p${index}-of-4`),
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
    for (const j of joiners) await j.stop();
    const shrunk = hosts[0].latestCheckpoint?.checkpointId ?? 0;
    await checkpointAfter(hosts[0], shrunk);
    await produce(10_000);

    // Both remaining job hosts die: the restart restores the latest checkpoint, the source dealt over two again.
    for (const h of hosts) h.kill();
    await Promise.all(hosts.map((h) => h.exited));
    const again = await Promise.all([0, 1].map((i) => processOf(2, i, 2, back.routing.totals)));
    expect(again.every((h) => (h.restored?.checkpointId ?? 0) > shrunk)).toBe(true);
    await produce(RECORDS);
    await writer.close();

    await expectExactTotals(job.kafka, job.output, 2, RECORDS);
    for (const h of again) await h.stop();
  }, 300_000);
});
