/**
 * `npm run demo`: the fraud-detection reference job run as a user would, through the control plane's public API —
 * an admin creates a tenant and its API key; the tenant uploads the fraud bundle (built with libs/bundle), deploys
 * it (the reconciler places it on the worker), rolls out rule version 1, streams seeded transactions with a viral
 * burst into Kafka, rolls out version 2 mid-stream, and reads the alerts back. The alerts are then checked exactly
 * against an independent reference (scripts/demo/verify-alerts.ts); any mismatch exits non-zero.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildBundle } from '@weir/bundle';
import { loadConfig } from '@weir/config';
import { TransactionStream } from '@weir/datagen';
import { deadLetterTopic, encodeKey, keyGroupFor, operatorIdsOf } from '@weir/engine';
import { createKafkaConnector } from '@weir/kafka';
import fraudJob, { fraudJobConfig, fraudRulesSchema, OPERATOR_IDS, tenantFraudTopics } from '../../examples/fraud-detection/job';
import { collectAlerts, readAcks, readOffsets } from './demo-topics';
import type { DemoRule } from './fraud-oracle';
import { printSummary } from './summary';
import { feedTransactions, partitionOf, sendEndMarkers, type FeedProgress } from './transaction-feed';
import { reference, verifyAlerts, type SentTransaction, type Verification } from './verify-alerts';
import { getJson, startProcess, waitFor } from './processes';
import { api, rollOutRules } from './weir-api';

// 500/s for 20 s: the job keeps up at 1,000/s on the shared 2-core machine (event-time latency p50 ~0.5 s,
// docs/fraud-detection.md). DEMO_RATE=N sends N/s instead; the rule limits scale with the rate (set for 100/s, so the
// alert mix stays alike), and the check is exact at any rate.
const RATE = Number(process.env.DEMO_RATE ?? 500);
const SCALE = RATE / 100;
const COUNT = RATE * 20;
const PARTITIONS = 4;
const PARALLELISM = Number(process.env.DEMO_PARALLELISM ?? 2);
const MAX_WINDOW_MS = 60_000;
const STREAM = {
  seed: 7,
  ratePerSec: RATE,
  payers: { keys: 20_000, exponent: 0.8 },
  merchants: { keys: 2_000, exponent: 1.0 },
  // A "viral" merchant: 30% of all traffic for 8 s, across the rule change.
  burst: { field: 'merchant' as const, key: 'm-viral', share: 0.3, atMs: 6_000, forMs: 8_000 },
};
const rule = (ruleId: string, version: number, fields: Partial<DemoRule>): DemoRule =>
  ({ ruleId, version, state: 'ACTIVE', groupingKeys: [], function: 'COUNT', comparison: '>', limit: 0, windowMs: 1_000, ...fields }) as DemoRule;
const payerSpend = (version: number, limit: number) =>
  rule('payer-spend', version, { groupingKeys: ['payer'], aggregateField: 'amount', function: 'SUM', comparison: '>=', limit, windowMs: 5_000 });
const merchantBurst = (version: number, limit: number) => rule('merchant-burst', version, { groupingKeys: ['merchant'], function: 'COUNT', comparison: '>', limit, windowMs: 1_000 });
/** Version 2 lowers both limits: same keys, functions and windows (what the exact check relies on). */
const CHANGES = [
  { v1: payerSpend(1, Math.round(600_000 * SCALE)), v2: payerSpend(2, Math.round(350_000 * SCALE)) },
  { v1: merchantBurst(1, Math.round(18 * SCALE)), v2: merchantBurst(2, Math.round(12 * SCALE)) },
];
const ruleSet = (version: 1 | 2) => CHANGES.map((c) => {
  const { version: _v, ...body } = version === 1 ? c.v1 : c.v2;
  return body;
});

const began = Date.now();
const say = (line: string) => console.log(`[demo ${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${line}`);
/** The job may lag behind on a loaded machine: keep waiting while alerts still arrive, give up after this long without any. */
const STALL_MS = 30_000;

async function main(): Promise<void> {
  if (!Number.isInteger(RATE) || RATE < 1 || RATE > 10_000) throw new Error(`DEMO_RATE must be an integer from 1 to 10000, not ${process.env.DEMO_RATE}`);
  const config = loadConfig();
  const logDir = resolve(config.WEIR_HOME, 'logs');
  mkdirSync(logDir, { recursive: true });
  const base = config.WEIR_CONTROL_PLANE_URL;
  const workerId = `demo-worker-${process.pid}`;
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-demo' });
  const kafkaAdmin = kafka.admin();

  say('starting the control plane and a worker (logs in .weir/logs/demo-*.log)');
  const adminToken = config.WEIR_ADMIN_TOKEN ?? `demo-admin-${randomBytes(16).toString('hex')}`;
  const controlPlane = startProcess('apps/control-plane/src/main.ts', { WEIR_ADMIN_TOKEN: adminToken }, join(logDir, 'demo-control-plane.log'));
  const worker = startProcess('apps/worker/src/main.ts', { WEIR_WORKER_ID: workerId }, join(logDir, 'demo-worker.log'));
  const admin = api(base, adminToken);
  let topics: string[] = [];
  let cancel = async (): Promise<void> => undefined;
  try {
    const bundle = buildBundle('examples/fraud-detection/index.ts');
    await waitFor('the control plane to be ready', 90_000, async () => ((await getJson(`${base}/health/ready`)).status === 200 ? true : undefined));
    await waitFor('the worker to register', 90_000, async () => {
      const { status, body } = await getJson(`${base}/v1/workers/${workerId}`, { authorization: `Bearer ${adminToken}` });
      return status === 200 && (body as { status: string }).status === 'ALIVE' ? true : undefined;
    });
    say(`control plane ready at ${base}; worker ${workerId} registered`);

    // The platform admin: a tenant and its API key. Everything after this uses only the tenant's key.
    const tenant = await admin.request<{ id: string }>('POST', '/v1/tenants', { name: `demo-${Date.now().toString(36)}`, quotas: { maxDeployments: 2, maxTotalParallelism: 4, maxBundleBytes: 16 << 20 } }, 201);
    const { key } = await admin.request<{ key: string }>('POST', `/v1/tenants/${tenant.id}/api-keys`, { name: 'demo', scope: 'write' }, 201);
    const client = api(base, key);
    const fraudTopics = tenantFraudTopics(tenant.id);
    topics = Object.values(fraudTopics) as string[];
    await kafkaAdmin.ensureTopics([
      { topic: fraudTopics.transactionsTopic, partitions: PARTITIONS },
      { topic: fraudTopics.alertsTopic, partitions: PARTITIONS },
      { topic: fraudTopics.shadowAlertsTopic!, partitions: 1 },
      { topic: fraudTopics.rulesTopic, partitions: 1 },
      { topic: fraudTopics.ruleAcksTopic, partitions: 1 },
    ]);
    say(`tenant ${tenant.id} created with an API key; its topics t.${tenant.id}.*`);

    const built = await bundle;
    const deployConfig = fraudJobConfig(fraudTopics, { maxWindowMs: MAX_WINDOW_MS, maxOutOfOrdernessMs: 200, idleTimeoutMs: 0 });
    const operatorIds = operatorIdsOf(fraudJob.instantiate(deployConfig));
    const manifest = {
      name: 'fraud-detection', version: '1.0.0', entryPoint: 'job.js', operatorIds,
      // The job's own, as it declares it with its properties' defaults (the upload checks that it is).
      rulesSchema: fraudRulesSchema(),
      defaultParallelism: PARALLELISM, maxParallelism: fraudJob.maxParallelism,
    };
    await client.upload('/v1/bundles', { manifest: JSON.stringify(manifest) }, { field: 'bundle', name: 'job.js', content: built.code });
    say(`bundle uploaded: examples/fraud-detection with its imports (@weir/rules, ajv) in one file, ${(built.code.length / 1024).toFixed(0)} KiB, sha256 ${built.sha256.slice(0, 12)}…`);

    const deployment = await client.request<{ id: string }>('POST', '/v1/deployments', {
      name: 'fraud-detection', bundle: { name: 'fraud-detection', version: '1.0.0' }, parallelism: { default: PARALLELISM }, config: deployConfig,
    }, 201);
    topics.push(deadLetterTopic(tenant.id, deployment.id));
    cancel = async () => {
      await client.request('PATCH', `/v1/deployments/${deployment.id}`, { desiredState: 'CANCELLED' }).catch(() => undefined);
    };
    await waitFor('the deployment to run', 90_000, async () => {
      const d = await client.request<{ status: string; statusReason: string | null }>('GET', `/v1/deployments/${deployment.id}`);
      if (d.status === 'FAILED') throw new Error(`deployment FAILED: ${d.statusReason}`);
      return d.status === 'RUNNING' ? true : undefined;
    });
    const history = await client.request<{ runs: { subtasks: { operatorId: string; subtask: number; keyGroups: number[][] }[] }[] }>('GET', `/v1/deployments/${deployment.id}/history`);
    const routing = history.runs[0].subtasks.filter((s) => s.operatorId === OPERATOR_IDS.route);
    const routerOf = (txId: string) => {
      const kg = keyGroupFor(encodeKey(txId), fraudJob.maxParallelism);
      return routing.find((r) => r.keyGroups.some(([a, b]) => kg >= a && kg <= b))!.subtask;
    };
    say(`deployment ${deployment.id} RUNNING on the worker, parallelism ${PARALLELISM}, topics and limits from its config`);

    const v1 = await rollOutRules(client, deployment.id, ruleSet(1));
    say(`rules version 1 applied by ${v1.rollout.acknowledgedSubtasks}/${v1.rollout.totalSubtasks} routing subtasks in ${v1.tookMs} ms`);

    const alerts = collectAlerts(kafka, fraudTopics.alertsTopic, PARTITIONS);
    await alerts.start();
    say(`sending ${COUNT} transactions at ${RATE}/s (seed ${STREAM.seed}; merchant m-viral takes 30% of the traffic from 6 s to 14 s)`);
    const writer = kafka.writer({ writerId: `demo-feed-${process.pid}` });
    await writer.start();
    const progress: FeedProgress = { sent: 0, maxBehindMs: 0 };
    const stream = new TransactionStream({ ...STREAM, startTime: Date.now() });
    const feeding = feedTransactions(writer, fraudTopics.transactionsTopic, stream, COUNT, PARTITIONS, progress);
    await waitFor('half of the transactions to be sent', 120_000, async () => (progress.sent >= COUNT / 2 ? true : undefined), 20);
    const sentAtSwap = progress.sent;
    const v2 = await rollOutRules(client, deployment.id, ruleSet(2));
    const sentMeanwhile = progress.sent - sentAtSwap;
    say(`rules version 2 published after ${sentAtSwap} transactions; applied by every routing subtask ${v2.tookMs} ms later (${sentMeanwhile} more sent meanwhile)`);
    const sent = await feeding;
    await sendEndMarkers(writer, fraudTopics.transactionsTopic, PARTITIONS, sent[sent.length - 1].ts + 5_000);
    await writer.close();
    const feedEnded = Date.now();

    // Where each transaction landed (partition, offset) and which routing subtask owns it: the input channels.
    const offsets = await readOffsets(kafka, kafkaAdmin, fraudTopics.transactionsTopic);
    const located: SentTransaction[] = sent.map((tx) => {
      const at = offsets.get(tx.txId);
      if (!at || at.partition !== partitionOf(tx.payer, PARTITIONS)) throw new Error(`transaction ${tx.txId} is not where it was sent`);
      return { tx, partition: at.partition, offset: at.offset, router: routerOf(tx.txId) };
    });
    const ref = reference(located, CHANGES);
    const acks = { topic: fraudTopics.transactionsTopic, positions: await readAcks(kafka, kafkaAdmin, fraudTopics.ruleAcksTopic, 2) };
    say(`feed done; waiting until the alerts match the reference exactly (a mismatch is reported once none arrived for ${STALL_MS / 1000} s)`);
    let verdict: Verification = verifyAlerts(ref, alerts.values(), acks);
    let seen = alerts.values().length;
    let lastNew = Date.now();
    while (!verdict.ok && Date.now() - lastNew < STALL_MS) {
      await new Promise((r) => setTimeout(r, 500));
      if (alerts.values().length > seen) [seen, lastNew] = [alerts.values().length, Date.now()];
      verdict = verifyAlerts(ref, alerts.values(), acks);
    }
    // Whatever the topic holds by now is in too (a late duplicate would show).
    await alerts.drain(await kafkaAdmin.offsets(fraudTopics.alertsTopic));
    verdict = verifyAlerts(ref, alerts.values(), acks);
    await alerts.close();

    printSummary({
      sent: located, alerts: alerts.values(), latency: alerts.latency, verdict, changes: CHANGES,
      swap: { afterSent: sentAtSwap, tookMs: v2.tookMs, sentMeanwhile }, feedSeconds: (feedEnded - stream.options.startTime) / 1000,
      maxBehindMs: progress.maxBehindMs, wallSeconds: (Date.now() - began) / 1000,
    });
    alerts.latency.destroy();
    if (!verdict.ok) throw new Error(`the alerts do not match the reference:\n  ${verdict.problems.slice(0, 20).join('\n  ')}`);
  } finally {
    await cancel();
    await kafkaAdmin.deleteTopics(topics).catch(() => undefined);
    await kafkaAdmin.close();
    await worker.stop();
    await controlPlane.stop();
  }
  say('done: worker and control plane stopped (the services keep running; `npm run services:down` stops them)');
}

main().catch((err) => {
  console.error(`[demo] failed: ${(err as Error).message}`);
  process.exit(1);
});
