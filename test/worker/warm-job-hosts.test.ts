/**
 * Warm job hosts (apps/worker/src/jobs/job-host-forks.ts) with real child processes: a spare forked ahead of need runs
 * a job handed to it later (Kafka in, keyed state, Kafka out, exact), another spare is forked in its place, a spare
 * that dies waiting is never handed out, and close() leaves no spare running.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { WarmJobHosts } from '../../apps/worker/src/jobs/job-host-forks';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { eventually } from '../control-plane/support/control-plane';
import { expectedOutput, inputRecords, readAll, removeJobData, sortOutputs, startJobHost, tempDir, writeBundle, type Output } from '../chaos/support';

const run = randomBytes(4).toString('hex');
const tenantId = `warm${run}`;
const jobId = 'totals';
const topics = { in: `t.${tenantId}.in`, out: `t.${tenantId}.out` };
const RECORDS = 400;

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? true : undefined);

describe('warm job hosts', () => {
  let kafka: KafkaConnector;
  let dir = '';
  let bundlePath = '';
  const hosts: JobProcess[] = [];
  const pools: WarmJobHosts[] = [];

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-test' });
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: topics.in, partitions: 2 }, { topic: topics.out, partitions: 2 }]);
    await admin.close();
    dir = await tempDir();
    bundlePath = await writeBundle(dir, topics.in, topics.out);
  });

  afterAll(async () => {
    for (const h of hosts) h.kill();
    for (const p of pools) p.close();
    const admin = kafka.admin();
    await admin.deleteTopics(Object.values(topics)).catch(() => undefined);
    await admin.close();
    await removeJobData(tenantId, dir);
  });

  it('runs a job on a spare forked before it, exactly, and forks another in its place', async () => {
    const pool = new WarmJobHosts({ spares: 1, refillDelayMs: 300 });
    pools.push(pool);
    expect(pool.ready).toBe(1);
    const spare = pool.take();
    expect(pool.ready).toBe(0);
    const host = startJobHost(
      {
        tenantId,
        jobId,
        bundlePath,
        parallelism: { in: 2, totals: 2 },
        maxParallelism: 32,
        stateDir: `${dir}/state`,
        deadLetterTopic: `weir.${tenantId}.${jobId}.dead-letters`,
      },
      spare,
    );
    hosts.push(host);
    await host.run();
    expect(host.state).toBe('RUNNING');
    const writer = kafka.writer({ writerId: `warm-in-${run}` });
    await writer.start();
    await writer.send(inputRecords(topics.in, 0, RECORDS, 2));
    await writer.close();
    const out = await readAll(kafka, topics.out, 2, (n) => n >= RECORDS, 20_000);
    expect(sortOutputs(out.map((r) => JSON.parse(r.value!.toString()) as Output))).toEqual(expectedOutput(RECORDS));
    // The job runs in the spare's process: killing that process loses the job.
    const next = await eventually('a spare in its place', async () => (pool.ready === 1 ? true : undefined));
    expect(next).toBe(true);
    spare.kill('SIGKILL');
    await host.exited;
    expect(host.state).toBe('LOST');
  });

  it('never hands out a spare that died waiting, and close() kills the spares', async () => {
    const pool = new WarmJobHosts({ spares: 2, refillDelayMs: 60_000 });
    pools.push(pool);
    const first = pool.take();
    const second = pool.take();
    // Both spares gone to take(): a third call forks a fresh child rather than wait for the refill.
    const third = pool.take();
    expect(pool.ready).toBe(0);
    expect(new Set([first.pid, second.pid, third.pid]).size).toBe(3);
    // A spare killed while it waits.
    const pool2 = new WarmJobHosts({ spares: 1, refillDelayMs: 60_000 });
    pools.push(pool2);
    const [victim] = (pool2 as unknown as { spares: ChildProcess[] }).spares;
    victim.kill('SIGKILL');
    await eventually('the spare dead', async () => exited(victim));
    expect(pool2.ready).toBe(0);
    const handed = pool2.take();
    expect(handed.pid).not.toBe(victim.pid);
    for (const child of [first, second, third, handed]) child.kill('SIGKILL');
    // close(): the spares it holds are killed.
    const pool3 = new WarmJobHosts({ spares: 1 });
    const [held] = (pool3 as unknown as { spares: ChildProcess[] }).spares;
    pool3.close();
    await eventually('the spare killed by close', async () => exited(held));
  });
});
