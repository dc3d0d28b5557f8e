/**
 * Warm job hosts (apps/worker/src/jobs/job-host-forks.ts) with real child processes: a spare forked ahead of need runs
 * a job handed to it later (Kafka in, keyed state, Kafka out, exact), another spare is forked in its place, a spare
 * that dies waiting is never handed out, and close() leaves no spare running. And a worker (WorkerApp) with
 * WEIR_WORKER_WARM_JOB_HOSTS=1 runs a dispatched job on its spare and leaves no job host behind when it stops.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import type { RunSubtasks } from '@weir/protocol';
import { WarmJobHosts, type ForkedJobHost } from '../../apps/worker/src/jobs/job-host-forks';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { eventually } from '../control-plane/support/control-plane';
import { startWorkerFixture } from './worker-fixture';
import { expectedOutput, totalsJobSource, inputRecords, readAll, removeJobData, sortOutputs, startJobHost, tempDir, writeBundle, type Output } from '../chaos/support';

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
    spare.child.kill('SIGKILL');
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
    expect(new Set([first.child.pid, second.child.pid, third.child.pid]).size).toBe(3);
    // A spare killed while it waits.
    const pool2 = new WarmJobHosts({ spares: 1, refillDelayMs: 60_000 });
    pools.push(pool2);
    const [{ child: victim }] = (pool2 as unknown as { spares: ForkedJobHost[] }).spares;
    victim.kill('SIGKILL');
    await eventually('the spare dead', async () => exited(victim));
    expect(pool2.ready).toBe(0);
    const handed = pool2.take();
    expect(handed.child.pid).not.toBe(victim.pid);
    for (const host of [first, second, third, handed]) host.child.kill('SIGKILL');
    // close(): the spares it holds are killed.
    const pool3 = new WarmJobHosts({ spares: 1 });
    const [{ child: held }] = (pool3 as unknown as { spares: ForkedJobHost[] }).spares;
    pool3.close();
    await eventually('the spare killed by close', async () => exited(held));
  });

  it('a worker with one warm job host runs a dispatched job on it and leaves no job host behind when it stops', async () => {
    const jobHosts = () =>
      execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('job-host'))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
    const before = jobHosts();
    const wTopics = { in: `t.${tenantId}.win`, out: `t.${tenantId}.wout` };
    const fixture = await startWorkerFixture({
      tenantId,
      jobId: 'warm-totals',
      workerId: `warm-worker-${run}`,
      jobSource: totalsJobSource(wTopics.in, wTopics.out),
      topics: [{ topic: wTopics.in, partitions: 2 }, { topic: wTopics.out, partitions: 2 }],
      config: { WEIR_WORKER_WARM_JOB_HOSTS: '1' },
    });
    try {
      // The spare waits before any command: a job host process of this worker, running nothing.
      const spares = await eventually('the spare forked', async () => {
        const now = jobHosts().filter((pid) => !before.includes(pid));
        return now.length === 1 ? now : undefined;
      });
      const command: RunSubtasks = {
        v: 1,
        type: 'run-subtasks',
        idempotencyKey: `warm-run-${run}`,
        issuedAt: Date.now(),
        tenantId,
        jobId: 'warm-totals',
        bundle: fixture.bundle,
        maxParallelism: 32,
        subtasks: [
          { operatorId: 'in', subtask: 0, keyGroups: [] },
          { operatorId: 'totals', subtask: 0, keyGroups: [[0, 31]] },
        ],
      };
      await fixture.app.supervisor.run(command);
      const writer = kafka.writer({ writerId: `warm-worker-in-${run}` });
      await writer.start();
      await writer.send(inputRecords(wTopics.in, 0, 100, 2));
      await writer.close();
      const out = await readAll(kafka, wTopics.out, 2, (n) => n >= 100, 20_000);
      expect(sortOutputs(out.map((r) => JSON.parse(r.value!.toString()) as Output))).toEqual(expectedOutput(100));
      // It ran in the spare: killing that process is losing the job.
      expect(fixture.app.supervisor.runningSubtasks().map((s) => s.state)).toEqual(['RUNNING', 'RUNNING']);
      process.kill(spares[0], 'SIGKILL');
      await eventually('the job lost with its process', async () => (fixture.app.supervisor.runningSubtasks().every((s) => s.state !== 'RUNNING') ? true : undefined));
    } finally {
      await fixture.close();
    }
    await eventually('no job host of the worker left', async () => (jobHosts().filter((pid) => !before.includes(pid)).length === 0 ? true : undefined));
  });
});
