/**
 * One deployment's metrics arriving from two workers (a run in two processes): the real heartbeat path (reporter →
 * worker-events queue → MetricsIngestor → Redis → MetricsPublisher) merges every subtask's latest snapshot whichever
 * worker sent it, and the deployment's throughput is what enters the job at its source, not the sum of its stages.
 */
import { randomBytes } from 'node:crypto';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { createWorkerReporter, type WorkerReporter } from '@weir/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDeploymentId } from '../../../apps/control-plane/src/deployments/deployment-id';
import { deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { deleteEventKeys, gql, insertDeployment, snapshotOf } from './support';

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
const run = randomBytes(3).toString('hex');
const workerIds = [`mp-a-${run}`, `mp-b-${run}`];
const deploymentId = newDeploymentId();
let cp: RunningControlPlane;
let tenant: TestTenant;
const reporters: WorkerReporter[] = [];

/** A worker heartbeating the given snapshots of the deployment, each subtask RUNNING in `process`. */
function reporterFor(workerId: string, process: number, snapshots: () => SubtaskMetricsSnapshot[]): WorkerReporter {
  return createWorkerReporter(config, { workerId, slots: 2, version: 'test' }, {
    status: () => {
      const metrics = snapshots();
      return {
        runningSubtasks: metrics.map((m) => ({ tenantId: m.tenantId, jobId: m.jobId, operatorId: m.operatorId, subtask: m.subtask, state: 'RUNNING' as const, process })),
        metrics,
      };
    },
  });
}

beforeAll(async () => {
  cp = await startControlPlane(config);
  tenant = await createTestTenant(config);
  await insertDeployment(config, tenant.tenantId, deploymentId);
  const at = (fields: Partial<SubtaskMetricsSnapshot>) => snapshotOf(tenant.tenantId, deploymentId, fields);
  // 700 records/s enter at the source (one subtask, process 0 on worker a) and reach `counts` by key, 300/s on its
  // subtask 0 (process 0, worker a) and 400/s on its subtask 1 (process 1, worker b).
  reporters.push(
    reporterFor(workerIds[0], 0, () => [
      at({ operatorId: 'words', subtask: 0, recordsInPerSec: 700, recordsOutPerSec: 700, keyGroupCounts: {}, heavyKeys: [] }),
      at({ operatorId: 'counts', subtask: 0, recordsInPerSec: 300, recordsOutPerSec: 300, keyGroupCounts: { 3: 300 } }),
    ]),
    reporterFor(workerIds[1], 1, () => [at({ operatorId: 'counts', subtask: 1, recordsInPerSec: 400, recordsOutPerSec: 400, keyGroupCounts: { 20: 400 } })]),
  );
  for (const r of reporters) await r.start();
});

afterAll(async () => {
  for (const r of reporters) await r.stop('test done');
  await cp?.close();
  await tenant?.cleanup();
  await deleteWorkers(config, workerIds);
  await deleteQueues(config);
  await deleteEventKeys(config);
});

describe('deployment metrics across processes and workers', () => {
  it('merges the subtasks of both workers and counts only the source input as throughput', async () => {
    const query = 'query ($id: ID!) { deployment(id: $id) { metrics { subtasks recordsInPerSec recordsOutPerSec } } }';
    const metrics = await eventually(
      'metrics merged from both workers',
      async () => {
        const res = await gql<{ deployment: { metrics: { subtasks: number; recordsInPerSec: number; recordsOutPerSec: number } | null } }>(cp.url, tenant.readKey, query, {
          id: deploymentId,
        });
        const m = res.body.data?.deployment.metrics;
        return m && m.subtasks === 3 ? m : undefined;
      },
      { timeoutMs: 20_000, everyMs: 200 },
    );
    // Summing every stage would say 1400/s.
    expect(metrics.recordsInPerSec).toBe(700);
  });
});
