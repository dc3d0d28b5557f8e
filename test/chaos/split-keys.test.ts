/**
 * A hot key of a splittable window split across the two job hosts of a run while input flows and checkpoints are
 * taken every 400 ms (exactly-once sink): process 0 applies the table and hands it to process 1 over the run's
 * control channel. Then both job hosts are killed and the run restarts from its latest checkpoint (which holds partial
 * windows in both key groups) without the split, folds nothing, splits again, and runs to the end. The committed
 * windows (read_committed) equal those computed from the input: each once, every count and sum right.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildBundle } from '@weir/bundle';
import { encodeKey, exchangeTopic, keyGroupFor, runControlTopic } from '@weir/engine';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { checkpointAfter, totalsJobFixture } from './fixture';
import { readAll } from './support';
import { expectedWindows, splitInput, SPLIT_MAX_PARALLELISM as MAX_PARALLELISM, splitWindowJobSource, windowsUpTo } from './split-window-job';

const PARTITIONS = 2;
const RECORDS = 16_000;

/** Record i: every third record is the hot key's, the others spread over 20 keys. */
function keyOf(i: number): string {
  return i % 3 === 0 ? 'hot' : `k${i % 20}`;
}

describe('a hot key split across job hosts, exactly-once through a crash', () => {
  const job = totalsJobFixture('split', { input: PARTITIONS, output: 2 });

  afterAll(async () => {
    const admin = job.kafka.admin();
    const internal = ['counts', 'counts-merge'].map((stage) => exchangeTopic(job.tenantId, job.jobId, stage));
    await admin.deleteTopics([...internal, runControlTopic(job.tenantId, job.jobId)]).catch(() => undefined);
    await admin.close();
  });

  async function bundle(): Promise<string> {
    const entry = join(job.dir, `split-${randomBytes(3).toString('hex')}.ts`);
    await writeFile(entry, splitWindowJobSource(job.input, job.output));
    const built = await buildBundle(entry);
    const path = join(job.dir, `bundle-${built.sha256}.js`);
    await writeFile(path, built.code);
    return path;
  }

  const startRun = (bundlePath: string, runNo: number): Promise<JobProcess[]> =>
    Promise.all(
      [0, 1].map((index) =>
        job.start(runNo, {
          bundlePath,
          parallelism: { in: 2, counts: 2, 'counts-merge': 2 },
          process: { index, count: 2 },
          subtasks: { in: [index], counts: [index], 'counts-merge': [index] },
          runNo,
        }),
      ),
    );

  /** Waits until every process's subtask of `counts` reports `count` split keys in its heartbeat snapshot. */
  async function splitEverywhere(hosts: readonly JobProcess[], count: number): Promise<void> {
    const deadline = Date.now() + 15_000;
    const reported = () => hosts.map((h) => h.latestMetrics.find((m) => m.operatorId === 'counts')?.keySplits?.length ?? -1);
    while (reported().some((n) => n !== count) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(reported()).toEqual(hosts.map(() => count));
  }

  it('splits while input flows, survives a kill of every host and a restore without the split, and folds back: windows exact', async () => {
    const bundlePath = await bundle();
    const writer = job.kafka.writer({ writerId: `test-split-in-${job.run}` });
    await writer.start();
    let produced = 0;
    const produce = async (upTo: number): Promise<void> => {
      while (produced < upTo) {
        const to = Math.min(upTo, produced + 500);
        await writer.send(splitInput(job.input, produced, to, PARTITIONS, keyOf));
        produced = to;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const hot = keyGroupFor(encodeKey('hot'), MAX_PARALLELISM);
    // Contiguous ranges: subtask 0 owns 0..15, subtask 1 owns 16..31; the other part lives on the other subtask.
    const other = hot < MAX_PARALLELISM / 2 ? MAX_PARALLELISM - 1 : 0;
    const split = { key: 'hot', keyGroup: hot, parts: [hot, other], weights: [0.5, 0.5] };

    const hosts = await startRun(bundlePath, 1);
    await produce(3_000);
    const flowing = produce(8_000);
    await hosts[0].splitKeys({ splitId: 's1', operatorId: 'counts', splits: [split] });
    await splitEverywhere(hosts, 1);
    await flowing;
    // The hot key's records reach the other subtask too, in the other part's key group.
    const otherHost = hosts[other < MAX_PARALLELISM / 2 ? 0 : 1];
    const heavy = () => otherHost.latestMetrics.find((m) => m.operatorId === 'counts')?.heavyKeys ?? [];
    const deadline = Date.now() + 10_000;
    while (!heavy().some((k) => k.key === 'hot' && k.keyGroup === other) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(heavy().find((k) => k.key === 'hot')?.keyGroup).toBe(other);
    // A checkpoint with the hot key's partial windows in both key groups, then more input, then both hosts die.
    await checkpointAfter(hosts[0], hosts[0].latestCheckpoint?.checkpointId ?? 0);
    await produce(10_000);
    for (const h of hosts) h.kill();
    await Promise.all(hosts.map((h) => h.exited));

    const again = await startRun(bundlePath, 2);
    expect(again.every((h) => (h.restored?.checkpointId ?? 0) > 0)).toBe(true);
    // The restored run starts unsplit; the partials restored in the other key group still merge into their windows.
    await splitEverywhere(again, 0);
    await produce(12_000);
    await again[0].splitKeys({ splitId: 's2', operatorId: 'counts', splits: [{ ...split, weights: [0.25, 0.75] }] });
    await splitEverywhere(again, 1);
    await produce(14_000);
    await again[0].splitKeys({ splitId: 's3', operatorId: 'counts', splits: [] });
    await splitEverywhere(again, 0);
    await produce(RECORDS);
    await writer.close();

    const expected = expectedWindows(RECORDS, keyOf);
    const read = await readAll(job.kafka, job.output, 2, (n) => n >= expected.length, 30_000);
    const windows = windowsUpTo(read, expected);
    const ids = windows.map((w) => `${w.key}@${w.start}`);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i).slice(0, 5), 'duplicated windows').toEqual([]);
    expect(windows).toEqual(expected);
    for (const h of again) await h.stop();
  });
});
