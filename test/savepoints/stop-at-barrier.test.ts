/**
 * Stop-with-savepoint emits nothing after the savepoint, through real job hosts with an at-least-once sink (which
 * writes each batch at once): input keeps arriving while the job stops with a savepoint, a new job host restores
 * it, and every input record's output (its key's running count and sum) appears exactly once. Without the sources
 * stopping at the savepoint's barrier, what the first job read between the barrier and its stop is written twice.
 */
import { describe, expect, it } from 'vitest';
import { expectedOutput, inputRecords, type Output, readAll, sortOutputs } from '../chaos/support';
import { totalsJobFixture } from '../chaos/fixture';

const RECORDS = 4_000;
const BATCH = 40;
const AT_LEAST_ONCE = { intervalMs: 400, retain: 3, delivery: 'at-least-once' } as const;

describe('stop-with-savepoint with an at-least-once sink', () => {
  const job = totalsJobFixture('stopsp', { input: 2, output: 2 });

  it('writes each output exactly once across the stop and the restore, though input flows throughout', async () => {
    const { kafka } = job;
    const first = await job.start(0, { checkpointing: AT_LEAST_ONCE });
    const writer = kafka.writer({ writerId: `test-stopsp-${job.run}` });
    await writer.start();
    let sent = 0;
    // ~2,000 records/s on a fixed schedule, before, during and after the stop.
    const producing = (async () => {
      while (sent < RECORDS) {
        await writer.send(inputRecords(job.input, sent, sent + BATCH, 2));
        sent += BATCH;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    while (sent < RECORDS / 3) await new Promise((resolve) => setTimeout(resolve, 20));

    const key = await first.stopWithSavepoint('sp-stop');
    expect(first.state).toBe('FINISHED');
    const stoppedAt = sent;
    const second = await job.start(1, { checkpointing: AT_LEAST_ONCE, restoreFrom: { snapshotId: 'sp-stop', location: key } });
    await producing;
    await writer.close();
    expect(stoppedAt).toBeLessThan(RECORDS); // the input really flowed across the stop

    const records = await readAll(kafka, job.output, 2, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    expect(outputs.length).toBe(RECORDS);
    expect(outputs).toEqual(expectedOutput(RECORDS));
    await second.stop();
  }, 120_000);
});
