/**
 * Live key-group moves between the job hosts of one run while input flows and checkpoints are taken every 400 ms
 * (exactly-once sink): process 0 leads each move between two checkpoints. Then the job hosts are killed and the run
 * restarts from its latest checkpoint with the routing the moves left. The committed output (read_committed) equals an
 * uninterrupted run's, record by record.
 */
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { expectExactTotals, totalsJobFixture } from './fixture';
import { inputRecords } from './support';

const PARTITIONS = 2;
const RECORDS = 12_000;
const BATCH = 500;
const MAX_PARALLELISM = 32;

describe('live key-group moves between job hosts, exactly-once', () => {
  const job = totalsJobFixture('moves', { input: PARTITIONS, output: 2 });

  afterAll(async () => {
    const admin = job.kafka.admin();
    await admin.deleteTopics([exchangeTopic(job.tenantId, job.jobId, 'totals'), runControlTopic(job.tenantId, job.jobId)]).catch(() => undefined);
    await admin.close();
  });

  const startRun = (runNo: number, routing?: number[]): Promise<JobProcess[]> =>
    Promise.all(
      [0, 1].map((index) =>
        job.start(runNo, {
          parallelism: { in: 2, totals: 2 },
          process: { index, count: 2 },
          subtasks: { in: [index], 'by-key': [index], totals: [index], out: [index] },
          runNo,
          ...(routing ? { routing: { totals: routing } } : {}),
        }),
      ),
    );

  it('moves key groups both ways while input flows; a restart from the latest checkpoint keeps the routing; output exact', async () => {
    const writer = job.kafka.writer({ writerId: `test-moves-in-${job.run}` });
    await writer.start();
    let produced = 0;
    const produce = async (upTo: number): Promise<void> => {
      while (produced < upTo) {
        const to = Math.min(upTo, produced + BATCH);
        await writer.send(inputRecords(job.input, produced, to, PARTITIONS));
        produced = to;
      }
    };
    // Contiguous ranges to start with: subtask 0 owns 0..15, subtask 1 owns 16..31.
    const owners: number[] = Array.from({ length: MAX_PARALLELISM }, (_, kg) => (kg < MAX_PARALLELISM / 2 ? 0 : 1));

    const hosts = await startRun(1);
    await produce(3_000);
    const flowing = produce(6_000);
    // Four key groups to subtask 1, then two of subtask 1's to subtask 0, each move while records of them flow.
    const first = await hosts[0].moveKeyGroups({ moveId: 'm1', operatorId: 'totals', moves: [0, 1, 2, 3].map((kg) => ({ keyGroup: kg, fromSubtask: 0, toSubtask: 1 })) });
    for (const m of first.moved) owners[m.keyGroup] = m.toSubtask;
    const second = await hosts[0].moveKeyGroups({ moveId: 'm2', operatorId: 'totals', moves: [20, 21].map((kg) => ({ keyGroup: kg, fromSubtask: 1, toSubtask: 0 })) });
    for (const m of second.moved) owners[m.keyGroup] = m.toSubtask;
    await flowing;
    expect(first.moved.map((m) => m.keyGroup).sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
    expect(second.moved).toHaveLength(2);
    expect(first.moved.every((m) => m.bytes > 0)).toBe(true);

    // A checkpoint after the moves, then both job hosts die: the restart restores it with the moved routing.
    const after = hosts[0].latestCheckpoint?.checkpointId ?? 0;
    const deadline = Date.now() + 30_000;
    while ((hosts[0].latestCheckpoint?.checkpointId ?? 0) <= after && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(hosts[0].latestCheckpoint?.checkpointId ?? 0).toBeGreaterThan(after);
    await produce(8_000);
    for (const h of hosts) h.kill();
    await Promise.all(hosts.map((h) => h.exited));

    const again = await startRun(2, owners);
    expect(again.every((h) => (h.restored?.checkpointId ?? 0) > after)).toBe(true);
    await produce(RECORDS);
    await writer.close();

    await expectExactTotals(job.kafka, job.output, 2, RECORDS);
    for (const h of again) await h.stop();
  }, 240_000);
});
