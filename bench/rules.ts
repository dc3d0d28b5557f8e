/**
 * npm run bench -- rules: 100 rule-set swaps on a running fraud job under a steady transaction load, through the
 * real API (control plane in this process, a real worker, its job host a child process, Kafka, Postgres, S3).
 * - swap_p50_ms / swap_p99_ms: from the API accepting a version (its rollout row's creation) to the last routing
 *   subtask applying it (the ack's appliedAt, the subtask's clock: same machine), per swap. (The ack record's Kafka
 *   timestamp is its event time, the rules record's: measuring to it, as before, measured nothing.)
 * - lost / double_judged: every version is a rule that alerts on every transaction, so each transaction must have
 *   exactly one alert; after the run, transactions with none / with more than one.
 * - throughput_dip_pct: alerts per second while swapping vs the 8 s before the swaps (by arrival second), under one
 *   steady paced load (one producer for the whole run); rate_tx_s is the rate the load actually held.
 * Bounded: 5 s warm-up, 8 s baseline, swaps until 100 or 90 s, a drain of at most 60 s. Flags: --swaps N --rate R.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deadLetterTopic, tenantTopicPrefix } from '@weir/engine';
import { produceTransactions } from '../apps/cli/src/generate/produce-transactions';
import type { Alert } from '../examples/fraud-detection';
import { api, deleteTopics, ensureTopics, startWorker, waitForStatus } from '../test/control-plane/deployments/support';
import { everyTx, parse, readUntil, uploadFraudBundle, waitForRollout } from '../test/control-plane/rules/support';
import { deleteQueues, deleteWorkers, startControlPlane, testConfig, uniquePrefix } from '../test/control-plane/support/control-plane';
import { createTestTenant } from '../test/control-plane/support/tenants';
import { printJsonLine, printTable } from './_latency';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const SWAPS = arg('swaps', 100);
const RATE = arg('rate', 3_000);
const BASELINE_MS = 8_000;
const SWAP_BUDGET_MS = 90_000;
/** The first seconds of load warm the job up (JIT, state, watermarks): not part of the baseline. */
const WARMUP_MS = 5_000;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const run = randomBytes(3).toString('hex');
  // Heartbeats every second: at 250 ms a loaded machine makes the worker look lost and the job restarts mid-run.
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '1000', WEIR_LOG_LEVEL: 'warn' });
  const home = await mkdtemp(join(tmpdir(), 'weir-bench-rules-'));
  const tenant = await createTestTenant(config);
  const p = `${tenantTopicPrefix(tenant.tenantId)}${run}.`;
  const topics = {
    transactionsTopic: `${p}transactions`, rulesTopic: `${p}rules`, alertsTopic: `${p}alerts`, shadowAlertsTopic: `${p}shadow-alerts`, ruleAcksTopic: `${p}rule-acks`,
  };
  const kafka = await ensureTopics(config, [topics.transactionsTopic, topics.alertsTopic, topics.shadowAlertsTopic], 2);
  await ensureTopics(config, [topics.rulesTopic, topics.ruleAcksTopic], 1);
  const cp = await startControlPlane(config);
  const workerId = `bench-rules-${run}`;
  const worker = await startWorker(config, workerId, join(home, 'worker'), 32);
  const client = api(() => cp.url, tenant.writeKey);
  let deploymentId = '';
  try {
    await uploadFraudBundle(cp.url, tenant.writeKey, topics);
    const created = await client.post('/v1/deployments', {
      name: 'fraud-bench', bundle: { name: 'fraud-detection', version: '1.0.0' }, parallelism: { default: 2 },
      config: { topics: { transactions: topics.transactionsTopic, rules: topics.rulesTopic, alerts: topics.alertsTopic, 'shadow-alerts': topics.shadowAlertsTopic, 'rule-acks': topics.ruleAcksTopic } },
    });
    if (created.status !== 201) throw new Error(`deploy answered ${created.status}: ${JSON.stringify(created.body)}`);
    deploymentId = created.body.id as string;
    await waitForStatus(client, deploymentId, 'RUNNING', 60_000);
    const rulesPath = `/v1/deployments/${deploymentId}/rules`;
    const first = await client.post(rulesPath, { rules: [everyTx(1)] });
    // The job host may still be loading the bundle (a compile under load): the first acks can take a while.
    await waitForRollout(client, deploymentId, first.body.rollout.id as string, 120_000);

    // Alerts by arrival second, read while the run goes on.
    const arrivals = new Map<number, number>();
    const alerts: Alert[] = [];
    let reading = true;
    const alertReader = kafka.reader({ readerId: `bench-rules-alerts-${run}`, assignments: [0, 1].map((partition) => ({ topic: topics.alertsTopic, partition, offset: 'earliest' as const })) });
    await alertReader.start();
    const reads = (async () => {
      while (reading) {
        for (const r of await alertReader.poll(5_000, 100)) {
          const a = parse<Alert>(r);
          alerts.push(a);
          const second = Math.floor(Date.now() / 1_000);
          arrivals.set(second, (arrivals.get(second) ?? 0) + 1);
        }
      }
    })();

    // One steady paced load for the whole run, until aborted.
    const stopLoad = new AbortController();
    const load = produceTransactions(kafka, { seed: 1_000, ratePerSec: RATE }, {
      topic: topics.transactionsTopic, count: Infinity, partitions: 2, writerId: `bench-rules-${run}`, signal: stopLoad.signal,
    });

    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const baselineFrom = Date.now();
    await new Promise((r) => setTimeout(r, BASELINE_MS));
    const baselineTo = Date.now();

    const swapMs: number[] = [];
    const swapsFrom = Date.now();
    for (let i = 0; i < SWAPS && Date.now() - swapsFrom < SWAP_BUDGET_MS; i++) {
      // Alternate limits 0 and 1: a new version every time, every one alerting on every transaction.
      const res = await client.post(rulesPath, { rules: [everyTx(i % 2)] });
      if (res.status !== 201) throw new Error(`swap ${i} answered ${res.status}: ${JSON.stringify(res.body)}`);
      // A job lagging behind its input applies a swap late (the rules record waits behind queued data): waited for, and counted.
      const rollout = await waitForRollout(client, deploymentId, res.body.rollout.id as string, 120_000);
      if (rollout.phase !== 'ACTIVE') throw new Error(`swap ${i} ended ${rollout.phase}: ${rollout.message}`);
      const full = (await client.get(`${rulesPath}/rollouts/${rollout.id}`)).body as { createdAt: string; subtasks: { lastAckAt: string }[] };
      const lastAck = Math.max(...full.subtasks.map((s) => Date.parse(s.lastAckAt)));
      swapMs.push(lastAck - Date.parse(full.createdAt));
    }
    const swapsTo = Date.now();
    stopLoad.abort();
    const loaded = await load;

    // Flush event time so every transaction is judged, then count judgements per transaction.
    const writer = kafka.writer({ writerId: `bench-rules-flush-${run}` });
    await writer.start();
    const flush = { ts: Date.now() + 600_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 };
    await writer.send([0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify({ ...flush, txId: `flush-${partition}` }) })));
    await writer.close();
    const sent = loaded.sent;
    const drainUntil = Date.now() + 60_000;
    while (alerts.filter((a) => !a.txId.startsWith('flush')).length < sent && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 250));
    await new Promise((r) => setTimeout(r, 1_500));
    reading = false;
    await reads;
    await alertReader.close();

    const inputs = (await readUntil(kafka, topics.transactionsTopic, 2, (rs) => rs.length >= sent + 2)).map((r) => parse<{ txId: string }>(r).txId).filter((id) => !id.startsWith('flush'));
    const judged = new Map<string, number>();
    for (const a of alerts) judged.set(a.txId, (judged.get(a.txId) ?? 0) + 1);
    const lost = inputs.filter((id) => !judged.has(id)).length;
    const doubleJudged = inputs.filter((id) => (judged.get(id) ?? 0) > 1).length;

    const rate = (from: number, to: number) => {
      let n = 0;
      for (let s = Math.ceil(from / 1_000); s < Math.floor(to / 1_000); s++) n += arrivals.get(s) ?? 0;
      return n / Math.max(1, Math.floor(to / 1_000) - Math.ceil(from / 1_000));
    };
    const baselineRate = rate(baselineFrom, baselineTo);
    const swapRate = rate(swapsFrom, swapsTo);
    const dip = baselineRate > 0 ? Math.max(0, ((baselineRate - swapRate) / baselineRate) * 100) : NaN;
    const sorted = [...swapMs].sort((a, b) => a - b);
    printTable([
      { measure: 'swaps', value: swapMs.length },
      { measure: 'transactions sent', value: inputs.length },
      { measure: 'load tx/s (held)', value: Math.round((loaded.sent * 1_000) / loaded.elapsedMs) },
      { measure: 'load max behind schedule ms', value: loaded.maxBehindMs },
      { measure: 'alerts', value: alerts.filter((a) => !a.txId.startsWith('flush')).length },
      { measure: 'swap p50 ms', value: percentile(sorted, 50) },
      { measure: 'swap p99 ms', value: percentile(sorted, 99) },
      { measure: 'swap max ms', value: sorted[sorted.length - 1] },
      { measure: 'alerts/s baseline', value: Math.round(baselineRate) },
      { measure: 'alerts/s while swapping', value: Math.round(swapRate) },
    ], `rules: ${swapMs.length} swaps at ${RATE} tx/s, parallelism 2`);
    printJsonLine({
      bench: 'rules', swaps: swapMs.length, swap_p50_ms: percentile(sorted, 50), swap_p99_ms: percentile(sorted, 99), lost, double_judged: doubleJudged,
      throughput_dip_pct: Math.round(dip * 10) / 10, rate_tx_s: Math.round((loaded.sent * 1_000) / loaded.elapsedMs),
    });
  } catch (err) {
    // A failed run says why the job stopped, if it did: the deployment's runs with their outcomes.
    if (deploymentId) process.stderr.write(`runs: ${JSON.stringify((await client.get(`/v1/deployments/${deploymentId}/history`)).body).slice(0, 4_000)}\n`);
    throw err;
  } finally {
    await worker.stop('bench finished');
    await cp.close();
    await tenant.cleanup();
    await deleteWorkers(config, [workerId]);
    await deleteTopics(kafka, [...Object.values(topics), deadLetterTopic(tenant.tenantId, deploymentId)]);
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`bench rules failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
