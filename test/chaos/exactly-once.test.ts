/**
 * Exactly-once under SIGKILL: a deterministic input through a real job host (child process) with an exactly-once
 * Kafka sink; the job host is killed three times mid-run and restarted from its latest checkpoint on a fresh local
 * disk (as a re-placed worker would); the committed output (read_committed) equals an uninterrupted run's, record
 * by record: nothing lost, nothing duplicated.
 */
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { describe, expect, it } from 'vitest';
import { totalsJobFixture } from './fixture';
import { expectedOutput, inputRecords, type Output, readAll, sortOutputs } from './support';

const PARTITIONS = 2;
const RECORDS = 20_000;
const BATCH = 500;

describe('exactly-once Kafka → Kafka under SIGKILL', () => {
  const job = totalsJobFixture('chaos', { input: PARTITIONS, output: PARTITIONS });
  const { start } = job;

  /** Waits until the host has completed a checkpoint past `after`. */
  const checkpointPast = async (host: JobProcess, after: number): Promise<number> => {
    const deadline = Date.now() + 30_000;
    while ((host.latestCheckpoint?.checkpointId ?? 0) <= after) {
      if (Date.now() > deadline) throw new Error(`no checkpoint past ${after} within 30 s (state ${host.state}: ${host.failure ?? ''})`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return host.latestCheckpoint!.checkpointId;
  };

  it('commits every result exactly once across three SIGKILLs of the job host', async () => {
    const writer = job.kafka.writer({ writerId: `test-chaos-in-${job.run}` });
    await writer.start();
    let produced = 0;
    const produce = async (upTo: number): Promise<void> => {
      while (produced < upTo) {
        const to = Math.min(upTo, produced + BATCH);
        await writer.send(inputRecords(job.input, produced, to, PARTITIONS));
        produced = to;
      }
    };

    let host = await start(0);
    let lastCheckpoint = 0;
    const restores: NonNullable<JobProcess['restored']>[] = [];
    for (let kill = 1; kill <= 3; kill++) {
      // A slice of input, a checkpoint covering part of it, more input in flight, then SIGKILL without warning.
      await produce((kill * RECORDS) / 4 - 2 * BATCH);
      lastCheckpoint = await checkpointPast(host, lastCheckpoint);
      await produce((kill * RECORDS) / 4);
      await new Promise((r) => setTimeout(r, 150 * kill));
      host.kill();
      await host.exited;
      host = await start(kill);
      expect(host.restored, `incarnation ${kill} restored from a checkpoint`).not.toBeNull();
      restores.push(host.restored!);
      lastCheckpoint = host.restored!.checkpointId;
    }
    await produce(RECORDS);
    await writer.close();

    const records = await readAll(job.kafka, job.output, PARTITIONS, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    const seen = new Set<string>();
    const duplicates = outputs.filter((o) => (seen.has(`${o.k}/${o.i}`) ? true : (seen.add(`${o.k}/${o.i}`), false)));
    expect(duplicates.slice(0, 5), 'duplicated results').toEqual([]);
    const got = new Set(outputs.map((o) => o.i));
    const missing = Array.from({ length: RECORDS }, (_, i) => i).filter((i) => !got.has(i));
    const diagnosis = `missing ${missing.length} (first ${missing.slice(0, 3).join(', ')}, last ${missing.slice(-3).join(', ')}); ` +
      `host ${host.state}, latest checkpoint ${JSON.stringify(host.latestCheckpoint)}, last failure ${JSON.stringify(host.lastCheckpointFailure)}, ` +
      `restores ${JSON.stringify(restores.map((r) => ({ id: r.checkpointId, skipped: r.skipped.length, recommitted: r.recommittedEpochs })))}`;
    expect(outputs.length, diagnosis).toBe(RECORDS);
    expect(outputs).toEqual(expectedOutput(RECORDS));
    // Each restart began from a checkpoint, never from scratch.
    expect(restores.every((r) => r.checkpointId > 0)).toBe(true);
    await host.stop();
  }, 300_000); // three restarts on a shared, loaded machine: 42 s idle, 160 s at load average 19
});
