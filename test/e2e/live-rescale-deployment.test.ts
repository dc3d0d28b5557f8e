/**
 * A live rescale of a real deployment, end to end through the control plane: the keyed totals job (exactly-once
 * sink, checkpoints every 300 ms) over two job host processes on two workers of two slots each. While records flow,
 * PATCH parallelism 4 rescales it live: two job hosts join the same run owning nothing, process 0 moves half the
 * source's four partitions and then key groups to them, the deployment shows RESCALING with its progress and then
 * RUNNING in the same run with four processes.
 * Then back to 2 (the retirees stopped once the report is recorded). The committed output equals an uninterrupted
 * run's throughout.
 */
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { describe, expect, it } from 'vitest';
import { deleteTopics, waitForDeployment, waitForStatus } from '../control-plane/deployments/support';
import { adminHeaders, eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';
import { totalsFlow } from './totals-flow';

const STEP = 2_000;

interface Rescale {
  state: string;
  fromProcesses: number;
  toProcesses: number;
  moved: number;
  total: number;
  reason: string;
}
interface Deployment {
  status: string;
  runNo: number;
  parallelism: { default: number };
  rescale: Rescale | null;
  layout: { runNo: number; processes: { workerId: string; subtasks: { operatorId: string; keyGroups: number[][] }[] }[] };
}

describe('a live rescale of a deployment', { timeout: 300_000 }, () => {
  let deploymentId = '';
  const platform = platformFixture({
    name: 'rescale',
    heartbeatMs: 1_000,
    workers: 0,
    workerSlots: 2,
    topics: { input: 'in', output: 'out' },
    partitions: { input: 4, output: 2 },
    afterStop: async () => {
      if (deploymentId) await deleteTopics(platform.kafka, [exchangeTopic(platform.tenant.tenantId, deploymentId, 'totals'), runControlTopic(platform.tenant.tenantId, deploymentId)]);
    },
  });
  const flow = totalsFlow(platform, STEP, 4);

  it('goes 2 → 4 → 2 processes in the same run while records flow, showing its progress, and stays exact', async () => {
    const { client } = platform;
    await platform.startWorker('a', 2);
    await platform.startWorker('b', 2);
    const id = (deploymentId = await flow.deploy(await flow.bundle(), `rescale-${platform.run}`));
    await waitForStatus(client, id, 'RUNNING', 90_000);
    const get = async () => (await client.get(`/v1/deployments/${id}`)).body as Deployment;
    expect((await get()).layout.processes).toHaveLength(2);
    const keyGroupsOf = (d: Deployment) => d.layout.processes.map((p) => p.subtasks.find((s) => s.operatorId === 'totals')?.keyGroups);

    await flow.send();
    let flowing = flow.send(3 * STEP);
    const patched = await client.patch(`/v1/deployments/${id}`, { parallelism: { default: 4 } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const seen = new Set<string>();
    const grown = await waitForDeployment(client, id, 'RUNNING at 4 processes', (d) => {
      const dep = d as unknown as Deployment;
      if (dep.status === 'RESCALING' && dep.rescale) seen.add(`${dep.rescale.state} ${dep.rescale.moved}/${dep.rescale.total}`);
      return dep.status === 'RUNNING' && dep.parallelism.default === 4;
    }, 120_000) as unknown as Deployment;
    await flowing;
    expect(grown.runNo, 'the same run, not a restart').toBe(1);
    expect(grown.rescale).toMatchObject({ state: 'DONE', fromProcesses: 2, toProcesses: 4, moved: 16, total: 16 });
    expect(seen.size, `progress seen while RESCALING: ${[...seen].join(', ')}`).toBeGreaterThan(0);
    expect(grown.layout.processes).toHaveLength(4);
    expect(keyGroupsOf(grown).map((ranges) => (ranges ?? []).reduce((n, [a, b]) => n + b - a + 1, 0))).toEqual([8, 8, 8, 8]);
    await flow.expectExactOutput(60_000);

    flowing = flow.send(2 * STEP);
    expect((await client.patch(`/v1/deployments/${id}`, { parallelism: { default: 2 } })).status).toBe(200);
    const shrunk = await waitForDeployment(client, id, 'RUNNING at 2 processes', (d) => d.status === 'RUNNING' && (d as unknown as Deployment).parallelism.default === 2, 120_000) as unknown as Deployment;
    await flowing;
    expect(shrunk.runNo).toBe(1);
    expect(shrunk.rescale).toMatchObject({ state: 'DONE', fromProcesses: 4, toProcesses: 2, moved: 16 });
    expect(shrunk.layout.processes).toHaveLength(2);
    // The retirees are stopped: the fleet has its slots back.
    await eventually(
      'the retirees gone from the workers',
      async () => {
        const processes = new Set<number>();
        for (const role of ['a', 'b']) {
          const res = await fetch(`${platform.cp.url}/v1/workers/${platform.workerId(role)}`, { headers: adminHeaders() });
          for (const s of ((await res.json()) as { runningSubtasks: { jobId: string; process: number }[] }).runningSubtasks) if (s.jobId === id) processes.add(s.process);
        }
        return processes.size === 2 && !processes.has(2) && !processes.has(3) ? true : undefined;
      },
      { timeoutMs: 30_000, everyMs: 250 },
    );
    await flow.send();
    await flow.expectExactOutput(60_000);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED', 60_000);
  });
});
