/**
 * Tenant topic isolation at the job host, on a real worker: a bundle can name any Kafka topic, so the job host
 * refuses, before it starts anything, a job whose sources, sinks or dead letters lie outside `t.<tenant>.` and the
 * job's own internal topics `weir.<tenant>.<job>.`. The refusal names the topic and the allowed prefix. The topics
 * are given to the bundle through its run-subtasks config, which the worker does not check (the control plane does,
 * for configs; a bundle's hard-coded topics reach the job host just the same).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { startWorkerFixture, type WorkerFixture } from './worker-fixture';

const run = randomBytes(4).toString('hex');
const TENANT = `t${run}`;
const OTHER = `u${run}`;
const JOB = 'copy';
const OWN = { in: `t.${TENANT}.in`, out: `t.${TENANT}.out` };
/** Exists, so that a job allowed to read it would start: the refusal, not a missing topic, must stop it. */
const FOREIGN = `t.${OTHER}.in`;

const jobSource = `
import { defineJob, json, kafkaSink, kafkaSource, param } from '@weir/engine';
export default defineJob(
  { name: 'copy', maxParallelism: 8, parameters: { topics: { in: param.topic(), out: param.topic() } } },
  (job, { topics }) => {
    job.source('in', kafkaSource<unknown>({ topic: topics.in, format: json() }))
      .sink('out', kafkaSink<unknown>({ topic: topics.out, format: json() }));
  },
);
`;

describe('tenant topics at the job host', () => {
  let fixture: WorkerFixture;
  let app: WorkerApp;

  const command = (topics: { in: string; out: string }) =>
    fixture.runCommand({ maxParallelism: 8, subtasks: [{ operatorId: 'in', subtask: 0, keyGroups: [] }], config: { topics } });

  beforeAll(async () => {
    fixture = await startWorkerFixture({
      tenantId: TENANT, jobId: JOB, workerId: `topics-worker-${run}`, jobSource,
      topics: [{ topic: OWN.in, partitions: 1 }, { topic: OWN.out, partitions: 1 }, { topic: FOREIGN, partitions: 1 }],
    });
    app = fixture.app;
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it("refuses a source on another tenant's topic, naming it and the allowed prefix", async () => {
    const refused = app.supervisor.run(command({ in: FOREIGN, out: OWN.out }));
    await expect(refused).rejects.toThrow(`source "in" reads topic "${FOREIGN}", outside the tenant's namespace`);
    await expect(refused).rejects.toThrow(`only topics starting with "t.${TENANT}."`);
    expect(app.supervisor.runningSubtasks()).toEqual([]);
  });

  it("refuses a sink on another job's internal topic and on an un-namespaced topic, naming both", async () => {
    const otherJobs = `weir.${TENANT}.other-job.exchange`;
    const refused = app.supervisor.run(command({ in: otherJobs, out: 'demo.out' }));
    await expect(refused).rejects.toThrow(`source "in" reads topic "${otherJobs}"`);
    await expect(refused).rejects.toThrow(`sink "out" writes topic "demo.out"`);
    await expect(refused).rejects.toThrow(`own internal topics "weir.${TENANT}.${JOB}."`);
    expect(app.supervisor.runningSubtasks()).toEqual([]);
  });

  it('refuses a bundle whose job is not the graph its manifest names (as checked at upload)', async () => {
    const refused = app.supervisor.run({ ...command(OWN), operatorIds: ['in', 'score', 'out'] });
    await expect(refused).rejects.toThrow(`the bundle's job has the operators ["in","out"] here, but its manifest (checked against the bundle at upload) names ["in","score","out"]`);
    expect(app.supervisor.runningSubtasks()).toEqual([]);
  });

  it("runs a job on the tenant's own topics (its manifest's operator ids in any order)", async () => {
    await app.supervisor.run({ ...command(OWN), operatorIds: ['out', 'in'] });
    expect(app.supervisor.runningSubtasks()).toEqual([{ tenantId: TENANT, jobId: JOB, operatorId: 'in', subtask: 0, state: 'RUNNING' }]);
  });
});
