/**
 * A truncated checkpoint file: the job host's restore skips that checkpoint, says which file and why, and restores
 * the previous one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createBlobStore } from '@weir/blob';
import { CheckpointStore } from '@weir/checkpoint';
import { loadConfig } from '@weir/config';
import { totalsJobFixture } from './fixture';
import { inputRecords } from './support';

describe('recovery from a damaged checkpoint', () => {
  const job = totalsJobFixture('fallback', { input: 2, output: 1 });
  const { start } = job;
  const blob = createBlobStore(loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' }));
  const store = new CheckpointStore(blob);
  afterAll(() => blob.close());

  it('skips the checkpoint with a truncated file, names it, and restores the previous one', async () => {
    const writer = job.kafka.writer({ writerId: `test-fallback-${job.run}` });
    await writer.start();
    const host = await start(0);
    // Two checkpoints that differ: input between them changes key groups' state.
    let produced = 0;
    const deadline = Date.now() + 30_000;
    while ((host.latestCheckpoint?.checkpointId ?? 0) < 3) {
      if (Date.now() > deadline) throw new Error(`fewer than 3 checkpoints within 30 s (${host.state} ${host.failure ?? ''})`);
      await writer.send(inputRecords(job.input, produced, produced + 200, 2));
      produced += 200;
      await new Promise((r) => setTimeout(r, 100));
    }
    host.kill();
    await host.exited;
    await writer.close();

    const refs = (await store.list({ tenantId: job.tenantId, jobId: job.jobId })).filter((r) => r.kind === 'checkpoint');
    const latest = await store.read(refs[refs.length - 1]);
    const previous = await store.read(refs[refs.length - 2]);
    const previousFiles = new Set(previous.manifest.operators.flatMap((o) => o.subtasks.flatMap((s) => [...s.files, ...s.metadata].map((f) => f.sha256))));
    const victim = latest.manifest.operators
      .flatMap((o) => o.subtasks.flatMap((s) => s.metadata.map((f) => ({ f, label: `${o.operatorId}/${s.subtask}/${f.name}` }))))
      .find(({ f }) => !previousFiles.has(f.sha256) && f.size > 8);
    expect(victim, 'a file only the latest checkpoint has').toBeDefined();
    const key = `${latest.manifest.sharedPrefix}${victim!.f.sha256}`;
    const bytes = Buffer.concat(await (await blob.get(key)).toArray() as Buffer[]);
    await blob.put(key, bytes.subarray(0, Math.floor(bytes.length / 2)));

    const restarted = await start(1);
    const restored = restarted.restored!;
    expect(restored.checkpointId).toBe(previous.manifest.checkpointId);
    expect(restored.skipped).toHaveLength(1);
    expect(restored.skipped[0].checkpointId).toBe(latest.manifest.checkpointId);
    expect(restored.skipped[0].reason).toContain(victim!.label);
    expect(restored.skipped[0].reason).toMatch(/truncated|bytes/);
    await restarted.stop();
  }, 120_000);
});
