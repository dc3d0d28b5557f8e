/**
 * `npm run demo`: the control plane and one worker, a sample job shipped as a bundle through S3 and dispatched to
 * the worker over BullMQ, real records through Kafka, and a summary checked against what was sent.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createBlobStore } from '@weir/blob';
import { buildBundle } from '@weir/bundle';
import { loadConfig } from '@weir/config';
import { createKafkaConnector, type ConsumedRecord } from '@weir/kafka';
import { LatencyRecorder } from '@weir/metrics';
import { createCommandDispatcher } from '@weir/protocol';
import { PAGE_VIEWS_TOPIC, VIEWS_PER_USER_TOPIC, WINDOW_MS, type ViewsPerUser } from '../../examples/page-views/job';
import { feedPageViews } from './page-view-feed';
import { getJson, startProcess, waitFor } from './processes';

const TENANT = 'demo';
const JOB = 'page-views';
const RATE = 5_000;
const DURATION_MS = 15_000;
const SOURCE_PARALLELISM = 4;
const WINDOW_PARALLELISM = 2;

const say = (line: string) => console.log(`[demo] ${line}`);

async function main(): Promise<void> {
  const config = loadConfig();
  const logDir = resolve(config.WEIR_HOME, 'logs');
  mkdirSync(logDir, { recursive: true });
  const base = config.WEIR_CONTROL_PLANE_URL;
  const workerId = `demo-worker-${process.pid}`;
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-demo' });
  const kafkaAdmin = kafka.admin();
  const deadLetters = `weir.${TENANT}.${JOB}.dead-letters`;

  say('starting the control plane and a worker (logs in .weir/logs/demo-*.log)');
  // The demo is the platform's administrator for its run: the worker fleet is an admin-only view.
  const adminToken = config.WEIR_ADMIN_TOKEN ?? `demo-admin-${randomBytes(16).toString('hex')}`;
  const admin = { authorization: `Bearer ${adminToken}` };
  const controlPlane = startProcess('apps/control-plane/src/main.ts', { WEIR_ADMIN_TOKEN: adminToken }, join(logDir, 'demo-control-plane.log'));
  const worker = startProcess('apps/worker/src/main.ts', { WEIR_WORKER_ID: workerId }, join(logDir, 'demo-worker.log'));
  const dispatcher = createCommandDispatcher(config);
  try {
    await waitFor('the control plane to be ready', 60_000, async () => ((await getJson(`${base}/health/ready`)).status === 200 ? true : undefined));
    await waitFor('the worker to register', 60_000, async () => {
      const { status, body } = await getJson(`${base}/v1/workers/${workerId}`, admin);
      return status === 200 && (body as { status: string }).status === 'ALIVE' ? true : undefined;
    });
    say(`control plane ready at ${base}; worker ${workerId} registered`);

    await kafkaAdmin.deleteTopics([PAGE_VIEWS_TOPIC, VIEWS_PER_USER_TOPIC, deadLetters]);
    await kafkaAdmin.ensureTopics([
      { topic: PAGE_VIEWS_TOPIC, partitions: SOURCE_PARALLELISM },
      { topic: VIEWS_PER_USER_TOPIC, partitions: 4 },
      { topic: deadLetters, partitions: 1 },
    ]);

    const bundle = await buildBundle('examples/page-views/job.ts');
    const blobs = createBlobStore(config);
    const bundleKey = `tenants/${TENANT}/bundles/${JOB}/${bundle.sha256}.js`;
    await blobs.put(bundleKey, bundle.code, { contentType: 'application/javascript' });
    blobs.close();
    say(`bundle built and stored at s3://${config.WEIR_S3_BUCKET}/${bundleKey}`);

    const subtasks = [
      ...Array.from({ length: SOURCE_PARALLELISM }, (_, subtask) => ({ operatorId: 'page-views', subtask, keyGroups: [] as [number, number][] })),
      ...Array.from({ length: WINDOW_PARALLELISM }, (_, subtask) => ({
        operatorId: 'views-per-user',
        subtask,
        keyGroups: [[(subtask * 128) / WINDOW_PARALLELISM, ((subtask + 1) * 128) / WINDOW_PARALLELISM - 1]] as [number, number][],
      })),
    ];
    await dispatcher.send(workerId, {
      v: 1,
      type: 'run-subtasks',
      idempotencyKey: `demo-run-${process.pid}`,
      issuedAt: Date.now(),
      tenantId: TENANT,
      jobId: JOB,
      bundle: { key: bundleKey, sha256: bundle.sha256 },
      maxParallelism: 128,
      subtasks,
    });
    await waitFor('the job to run on the worker', 60_000, async () => {
      const { body } = await getJson(`${base}/v1/workers/${workerId}`, admin);
      const running = (body as { runningSubtasks?: { state: string }[] }).runningSubtasks ?? [];
      return running.length === subtasks.length && running.every((s) => s.state === 'RUNNING') ? true : undefined;
    });
    say(`job running: ${SOURCE_PARALLELISM} source subtasks → ${WINDOW_PARALLELISM} window subtasks (key groups split in halves)`);

    // Read results while the feed runs, so latency is measured as the results arrive.
    const reader = kafka.reader({
      readerId: `demo-results-${process.pid}`,
      assignments: Array.from({ length: 4 }, (_, partition) => ({ topic: VIEWS_PER_USER_TOPIC, partition, offset: 'earliest' })),
    });
    await reader.start();
    const results: ViewsPerUser[] = [];
    const latency = new LatencyRecorder();
    let feeding = true;
    const collecting = (async () => {
      while (feeding || results.length === 0 || (await reader.poll(1, 3_000)).length > 0) {
        const batch: ConsumedRecord[] = await reader.poll(5_000, 200);
        const readAt = Date.now();
        for (const r of batch) {
          const out = JSON.parse(r.value!.toString()) as ViewsPerUser;
          results.push(out);
          // Event-time latency of a window result: its last possible event (end − 1) → read back from Kafka.
          if (!out.user.startsWith('~')) latency.record(readAt - (out.windowEnd - 1));
        }
      }
    })();

    say(`sending ${RATE * (DURATION_MS / 1000)} page views at ${RATE}/s for ${DURATION_MS / 1000} s (Zipf users, 1 in 500 malformed)`);
    const writer = kafka.writer({ writerId: 'demo-feed' });
    await writer.start();
    const started = Date.now();
    const fed = await feedPageViews(writer, PAGE_VIEWS_TOPIC, { ratePerSec: RATE, durationMs: DURATION_MS, users: 1_000, windowMs: WINDOW_MS, poisonEvery: 500, seed: 42 });
    // End-of-input marker: one late-enough view per partition moves every partition's watermark past the last window.
    await writer.send(Array.from({ length: SOURCE_PARALLELISM }, (_, partition) => ({
      topic: PAGE_VIEWS_TOPIC, partition, value: JSON.stringify({ user: '~end', page: '/', ts: fed.lastTs + 5 * WINDOW_MS }),
    })));
    await writer.close();
    const expectedWindows = fed.expected.size;
    await waitFor('every window result', 60_000, async () => (results.filter((r) => !r.user.startsWith('~')).length >= expectedWindows ? true : undefined));
    feeding = false;
    await collecting;
    const elapsedS = (Date.now() - started) / 1000;
    await reader.close();

    const dead = await kafkaAdmin.offsets(deadLetters);
    const deadLettered = dead.reduce((n, p) => n + Number(p.latest) - Number(p.earliest), 0);
    const windows = results.filter((r) => !r.user.startsWith('~'));
    const wrong = windows.filter((r) => fed.expected.get(`${r.user}@${r.windowStart}`) !== r.views);
    const viewsOut = windows.reduce((n, r) => n + r.views, 0);
    const perUser = new Map<string, number>();
    for (const r of windows) perUser.set(r.user, (perUser.get(r.user) ?? 0) + r.views);
    const top = [...perUser].sort((a, b) => b[1] - a[1]).slice(0, 5);
    const { body: workerView } = await getJson(`${base}/v1/workers/${workerId}`, admin);
    const lat = latency.summary();

    await dispatcher.send(workerId, {
      v: 1, type: 'stop-subtasks', idempotencyKey: `demo-stop-${process.pid}`, issuedAt: Date.now(), tenantId: TENANT, jobId: JOB,
      subtasks: subtasks.map(({ operatorId, subtask }) => ({ operatorId, subtask })), reason: 'demo finished',
    });

    console.log('\n  Weir demo: page views per user, 1 s tumbling event-time windows');
    console.log('  ---------------------------------------------------------------');
    console.log(`  records sent             ${fed.sent} (${fed.poison} malformed) in ${elapsedS.toFixed(1)} s`);
    console.log(`  dead-lettered            ${deadLettered} (topic ${deadLetters})`);
    console.log(`  window results           ${windows.length} for ${perUser.size} users, ${viewsOut} views counted`);
    console.log(`  exact vs. sent           ${wrong.length === 0 && viewsOut === fed.sent - fed.poison ? 'yes: every (user, window) count matches' : `NO: ${wrong.length} windows differ`}`);
    console.log(`  busiest users            ${top.map(([u, n]) => `${u} ${n}`).join(', ')}`);
    console.log(`  event-time latency (ms)  p50 ${lat.p50.toFixed(0)}  p99 ${lat.p99.toFixed(0)}  max ${lat.max.toFixed(0)}  (window end → result read from Kafka)`);
    console.log(`  worker as the control plane sees it: ${(workerView as { status: string }).status}, ${(workerView as { runningSubtasks: unknown[] }).runningSubtasks.length} subtasks`);
    latency.destroy();
    if (wrong.length > 0 || viewsOut !== fed.sent - fed.poison || deadLettered !== fed.poison) {
      throw new Error('the results do not match what was sent');
    }
  } finally {
    await dispatcher.close();
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
