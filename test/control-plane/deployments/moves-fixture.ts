/**
 * What the key-group move tests share: a control plane on its own queue prefix against the real Postgres and Redis,
 * a tenant with the word-count bundle (`counts` is its keyed operator, 32 key groups), and stand-in workers made of
 * the protocol (ProtocolWorker), so what the workers answer to a move is what the test says.
 */
import { randomBytes } from 'node:crypto';
import type { WeirConfig } from '@weir/config';
import { afterAll, beforeAll, expect } from 'vitest';
import { adminHeaders, deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { ProtocolWorker } from './protocol-worker';
import { api, insertBundle, sha256, waitForStatus, type Api } from './support';

export interface MoveBody {
  moveId: string;
  deploymentId: string;
  runNo: number;
  operatorId: string;
  state: 'PENDING' | 'DONE' | 'FAILED';
  moves: { keyGroup: number; fromSubtask: number; toSubtask: number }[];
  reason: string;
  requestedBy: string;
  report: { moved: { keyGroup: number; fromSubtask: number; toSubtask: number; bytes: number; pauseMs: number }[]; durationMs: number } | null;
  failure: string | null;
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface MovesFixture {
  readonly run: string;
  readonly config: WeirConfig;
  readonly tenant: TestTenant;
  readonly cp: RunningControlPlane;
  readonly client: Api;
  readonly bundleId: string;
  /** Replaces the control plane (a restart), on the same queue prefix. */
  restartControlPlane(between?: () => Promise<void>): Promise<void>;
  startWorker(role: string, slots: number): Promise<ProtocolWorker>;
  /** Creates a deployment of the bundle at `counts` parallelism and waits for it to run; returns its id. */
  deployRunning(name: string, counts: number): Promise<string>;
  /** Polls a move until `done` holds. */
  waitForMove(deploymentId: string, moveId: string, done: (m: MoveBody) => boolean, what: string): Promise<MoveBody>;
  /** The key groups each process's `counts` subtask owns in the open run's layout, by process index. */
  countsLayout(deploymentId: string): Promise<number[][][]>;
}

export function movesFixture(name: string): MovesFixture {
  const run = randomBytes(3).toString('hex');
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
  const workers: ProtocolWorker[] = [];
  const state = {} as { tenant: TestTenant; cp: RunningControlPlane; client: Api; bundleId: string };

  const fixture: MovesFixture = {
    run,
    config,
    get tenant() {
      return state.tenant;
    },
    get cp() {
      return state.cp;
    },
    get client() {
      return state.client;
    },
    get bundleId() {
      return state.bundleId;
    },
    async restartControlPlane(between) {
      await state.cp.close();
      await between?.();
      state.cp = await startControlPlane(config);
    },
    async startWorker(role, slots) {
      const w = new ProtocolWorker(config, `${name}-${role}-${run}`, slots);
      workers.push(w);
      await w.start();
      await eventually(`worker ${w.id} ALIVE`, async () => {
        const res = await fetch(`${state.cp.url}/v1/workers/${w.id}`, { headers: adminHeaders() });
        return res.status === 200 && ((await res.json()) as { status: string }).status === 'ALIVE' ? true : undefined;
      });
      return w;
    },
    async deployRunning(deployment, counts) {
      const created = await state.client.post('/v1/deployments', { name: `${deployment}-${run}`, bundleId: state.bundleId, parallelism: { default: 1, operators: { counts } } });
      expect(created.status).toBe(201);
      await waitForStatus(state.client, created.body.id as string, 'RUNNING');
      return created.body.id as string;
    },
    async waitForMove(deploymentId, moveId, done, what) {
      let last: MoveBody | undefined;
      try {
        return await eventually(
          `move ${moveId} ${what}`,
          async () => {
            const res = await state.client.get(`/v1/deployments/${deploymentId}/key-group-moves/${moveId}`);
            last = res.body as MoveBody;
            return res.status === 200 && done(last) ? last : undefined;
          },
          { timeoutMs: 30_000, everyMs: 100 },
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; last seen ${JSON.stringify(last)}`);
      }
    },
    async countsLayout(deploymentId) {
      const layout = (await state.client.get(`/v1/deployments/${deploymentId}`)).body.layout as {
        processes: { index: number; subtasks: { operatorId: string; keyGroups: number[][] }[] }[];
      };
      return layout.processes.map((p) => p.subtasks.find((s) => s.operatorId === 'counts')?.keyGroups ?? []);
    },
  };

  beforeAll(async () => {
    state.tenant = await createTestTenant(config);
    // The workers never run the bundle: any bytes do, under the word-count job's manifest.
    const code = Buffer.from('export default {};');
    state.bundleId = await insertBundle(config, state.tenant.tenantId, { code, sha256: sha256(code) });
    state.cp = await startControlPlane(config);
    state.client = api(() => state.cp.url, state.tenant.writeKey);
  });

  afterAll(async () => {
    await state.cp?.close();
    for (const w of workers) await w.stop().catch(() => undefined);
    await state.tenant?.cleanup();
    await deleteWorkers(config, workers.map((w) => w.id));
    await deleteQueues(config);
  });

  return fixture;
}

/** Owners of the 32 key groups of `counts` at parallelism n, contiguous (Flink's ranges). */
export function contiguous(n: number): number[] {
  return Array.from({ length: 32 }, (_, kg) => Math.floor((kg * n) / 32));
}
