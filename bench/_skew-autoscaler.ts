/**
 * The skew bench's autoscaler figures, from a real deployment: a control plane and four workers of one slot each (in
 * this process; each job host process stands for one machine, its keyed subtask capped by time at CAP records/s,
 * `subtask.max-records-per-second`), the totals job (keyBy → keyed running count) in mode `auto`, fed at a fixed
 * rate by a generator. Load steps: 60% of 2 subtasks' capacity; then 2× (DS2 sizes it at 4 for the 70% target); then
 * back to 0.5× of that (sized at 2); then steady. Counted from the deployment's own decisions over REST:
 * - scale_steps_up / scale_steps_down: SCALE_UP / SCALE_DOWN decisions from the step until the deployment settled
 *   (RUNNING, no rescale, no new decision for SETTLE_MS); `overshoot` when it went past the size that meets the load;
 * - rescales_per_hour_steady: SCALE_* decisions while the load stays put, per hour of that phase.
 * The autoscaler's windows are shortened (interval 1 s, up window 5 s, down window 10 s, cool-down 10 s) so the run
 * takes minutes; its DS2 sizing and stabilization are the code deployments run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { exchangeTopic, runControlTopic, sinkCommitsTopic } from '@weir/engine';
import { createKafkaConnector, type ProducedRecord } from '@weir/kafka';
import type { WorkerApp } from '../apps/worker/src/worker-app';
import { TOTALS_OPERATORS, totalsJobSource } from '../test/chaos/support';
import { api, buildJob, deleteTopics, insertBundle, startWorker, waitForStatus } from '../test/control-plane/deployments/support';
import { deleteQueues, deleteWorkers, startControlPlane, testConfig, uniquePrefix } from '../test/control-plane/support/control-plane';
import { createTestTenant } from '../test/control-plane/support/tenants';

export interface AutoscalerFigures {
  readonly scale_steps_up: number;
  readonly scale_steps_down: number;
  readonly rescales_per_hour_steady: number;
  readonly overshoot: boolean;
  readonly path: string;
}

interface Decision {
  decisionId: string;
  source: string;
  kind: string;
  fromParallelism: number | null;
  toParallelism: number | null;
  decidedAt: string;
  reason: string;
}

const WORKERS = 4;
const PARTITIONS = 8;
const KEYS = 4_000;
/**
 * No new decision for this long: settled. Longer than a step can take to follow the last (cool-down 10 s after the
 * rescale ends, then the 10 s down window, the look interval and the live rescale itself).
 */
const SETTLE_MS = 40_000;
const PHASE_TIMEOUT_MS = 150_000;

export async function autoscalerFigures(options: { cap: number; steadyS: number }): Promise<AutoscalerFigures> {
  const { cap, steadyS } = options;
  const run = randomBytes(3).toString('hex');
  // The worker's own defaults (warm job hosts included), heartbeats every second so the autoscaler sees fresh rates.
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '1000', WEIR_WORKER_WARM_JOB_HOSTS: '1' });
  const home = await mkdtemp(join(tmpdir(), 'weir-bench-autoscale-'));
  const tenant = await createTestTenant(config);
  const topics = { input: `t.${tenant.tenantId}.in`, output: `t.${tenant.tenantId}.out` };
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-bench-autoscale' });
  const admin = kafka.admin();
  await admin.ensureTopics([{ topic: topics.input, partitions: PARTITIONS }, { topic: topics.output, partitions: 2 }]);
  await admin.close();
  const cp = await startControlPlane(config);
  const client = api(() => cp.url, tenant.writeKey);
  const workers: WorkerApp[] = [];
  const workerIds = Array.from({ length: WORKERS }, (_, i) => `autoscale-${i}-${run}`);
  let deploymentId = '';
  let feeding: { stop(): Promise<void>; setRate(rate: number): void } | null = null;
  try {
    for (const id of workerIds) workers.push(await startWorker(config, id, join(home, id), 1));
    const job = await buildJob(home, totalsJobSource(topics.input, topics.output));
    const bundleId = await insertBundle(config, tenant.tenantId, job, { name: 'totals', operatorIds: TOTALS_OPERATORS, topics: [topics.input, topics.output] });
    const created = await client.post('/v1/deployments', {
      name: `autoscale-${run}`,
      bundleId,
      parallelism: { default: 2, operators: {} },
      autoscalerMode: 'auto',
      partitionerMode: 'off',
      config: {
        properties: {
          'checkpoint.interval-ms': '1000',
          'subtask.max-records-per-second': String(cap),
          'autoscaler.interval-ms': '1000',
          'autoscaler.scale-up-window-ms': '5000',
          'autoscaler.scale-down-window-ms': '10000',
          'autoscaler.cooldown-ms': '10000',
          'autoscaler.max-parallelism': String(WORKERS * 2),
        },
      },
    });
    if (created.status !== 201) throw new Error(`POST /v1/deployments answered ${created.status}: ${JSON.stringify(created.body)}`);
    deploymentId = created.body.id as string;
    await waitForStatus(client, deploymentId, 'RUNNING', 120_000);

    const decisions = async (): Promise<Decision[]> =>
      ((await client.get(`/v1/deployments/${deploymentId}/scaling-decisions?limit=200`)).body as { items: Decision[] }).items
        .filter((d) => d.source === 'autoscaler' && (d.kind === 'SCALE_UP' || d.kind === 'SCALE_DOWN'))
        // Listed newest first; the phases read them in the order they were taken.
        .sort((a, b) => Date.parse(a.decidedAt) - Date.parse(b.decidedAt));
    const deployment = async () => (await client.get(`/v1/deployments/${deploymentId}`)).body as { status: string; rescale: { state: string } | null; parallelism: { default: number; operators: Record<string, number> } };
    /** Waits until no decision came for SETTLE_MS and no rescale runs; returns the decisions of the phase. */
    const settle = async (phase: string, since: Set<string>): Promise<Decision[]> => {
      const started = Date.now();
      let lastChange = Date.now();
      let seen = 0;
      for (;;) {
        await new Promise((r) => setTimeout(r, 1_000));
        const mine = (await decisions()).filter((d) => !since.has(d.decisionId));
        const d = await deployment();
        const busy = d.status !== 'RUNNING' || (d.rescale !== null && d.rescale.state !== 'DONE' && d.rescale.state !== 'FAILED');
        if (mine.length !== seen || busy) {
          seen = mine.length;
          lastChange = Date.now();
        }
        if (mine.length > 0 && Date.now() - lastChange >= SETTLE_MS) return mine;
        if (Date.now() - started > PHASE_TIMEOUT_MS) {
          console.log(`  ${phase}: not settled within ${PHASE_TIMEOUT_MS / 1000} s (${mine.length} decisions, status ${d.status})`);
          return mine;
        }
      }
    };
    const sizeOf = (rate: number) => Math.ceil(rate / (0.7 * cap));

    const base = Math.round(0.6 * 2 * cap);
    feeding = feed(kafka, topics.input, base);
    console.log(`  at ${base} records/s (60% of 2 subtasks of ${cap} records/s): warming up 20 s`);
    await new Promise((r) => setTimeout(r, 20_000));
    const before = new Set((await decisions()).map((d) => d.decisionId));
    if (before.size > 0) console.log(`  ${before.size} decisions while warming up: ${[...(await decisions())].map((d) => `${d.kind} ${d.fromParallelism}→${d.toParallelism}`).join(', ')}`);

    const high = base * 2;
    feeding.setRate(high);
    const up = await settle('up', before);
    const upTo = up.at(-1)?.toParallelism ?? 2;
    console.log(`  2× step to ${high} records/s (sized at ${sizeOf(high)}): ${up.map((d) => `${d.kind} ${d.fromParallelism}→${d.toParallelism}`).join(', ')}`);

    const seenUp = new Set([...before, ...up.map((d) => d.decisionId)]);
    feeding.setRate(base);
    const down = await settle('down', seenUp);
    const downTo = down.at(-1)?.toParallelism ?? upTo;
    console.log(`  0.5× step to ${base} records/s (sized at ${sizeOf(base)}): ${down.map((d) => `${d.kind} ${d.fromParallelism}→${d.toParallelism}`).join(', ')}`);

    const seenDown = new Set([...seenUp, ...down.map((d) => d.decisionId)]);
    await new Promise((r) => setTimeout(r, steadyS * 1_000));
    const steady = (await decisions()).filter((d) => !seenDown.has(d.decisionId));
    console.log(`  steady at ${base} records/s for ${steadyS} s: ${steady.length} decisions`);
    const overshoot = upTo > sizeOf(high) || up.some((d) => (d.toParallelism ?? 0) > sizeOf(high)) || downTo < sizeOf(base);
    return {
      scale_steps_up: up.length,
      scale_steps_down: down.length,
      rescales_per_hour_steady: Number(((steady.length * 3_600) / steadyS).toFixed(1)),
      overshoot,
      path: `2 → ${up.map((d) => d.toParallelism).join(' → ')} → ${down.map((d) => d.toParallelism).join(' → ')}`,
    };
  } finally {
    await feeding?.stop();
    if (deploymentId) {
      await client.patch(`/v1/deployments/${deploymentId}`, { desiredState: 'CANCELLED' }).catch(() => undefined);
      await waitForStatus(client, deploymentId, 'CANCELLED', 60_000).catch(() => undefined);
    }
    for (const w of workers) await w.stop('bench finished').catch(() => undefined);
    await cp.close();
    await tenant.cleanup();
    await deleteWorkers(config, workerIds);
    const internal = deploymentId
      ? [exchangeTopic(tenant.tenantId, deploymentId, 'totals'), runControlTopic(tenant.tenantId, deploymentId), sinkCommitsTopic(tenant.tenantId, deploymentId), `weir.${tenant.tenantId}.${deploymentId}.dead-letters`]
      : [];
    await deleteTopics(kafka, [...Object.values(topics), ...internal]).catch(() => undefined);
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  }
}

/** Records at `rate` per second, in batches every 100 ms, keys uniform over KEYS (the load steps, not skew, matter here). */
function feed(kafka: ReturnType<typeof createKafkaConnector>, topic: string, initial: number): { stop(): Promise<void>; setRate(rate: number): void } {
  let rate = initial;
  let stopped = false;
  let i = 0;
  const writer = kafka.writer({ writerId: `bench-autoscale-${randomBytes(3).toString('hex')}` });
  const done = (async () => {
    await writer.start();
    let due = Date.now();
    while (!stopped) {
      due += 100;
      const batch: ProducedRecord[] = [];
      for (let n = Math.round(rate / 10); n > 0; n--, i++) {
        const key = `k${(Math.imul(i, 2654435761) >>> 0) % KEYS}`;
        batch.push({ topic, key, value: JSON.stringify({ k: key, i, v: i % 7 }) });
      }
      await writer.send(batch);
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await writer.close();
  })();
  return {
    setRate: (r) => (rate = r),
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}
