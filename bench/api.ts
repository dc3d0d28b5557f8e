/**
 * npm run bench -- api [--rate R] [--subscribers S] [--updates U]
 *
 * The control plane's API under load, each figure beside a baseline measured in the same run (ratios = Weir ÷
 * baseline), with the servers in child processes (bench/_api-server.ts) so the load generator never shares their
 * event loop:
 * - REST: an authenticated, tenant-scoped list call (GET /v1/slos?limit=20: API key check, RLS transaction, 20 rows)
 *   at a fixed rate (default 1,000 requests/s) over keep-alive connections, latency measured from each request's
 *   SCHEDULED send time to the end of its response (no coordinated omission). Baseline: the unauthenticated
 *   GET /health at the same rate. Alternating passes (A B A B) after a warm-up pass of each. Beside latency, the
 *   server's CPU time per request in each pass (user + system, from the child): on a shared machine latency follows
 *   the neighbours' load, CPU per request much less. Beside it, the CPU of the Postgres backends serving the
 *   server's own connections (bench/_pg-backends.ts, Linux), so work moved into SQL is not hidden. The control plane
 *   logs at info, as users run it, into a file.
 * - Subscriptions: S (default 1,000) graphql-ws clients subscribed to one deployment's `deploymentMetrics`; U metrics
 *   updates published on the deployment's Redis channel (as the metrics publisher does), each stamped with its
 *   publish time; delivery latency = arrival at a subscriber − publish time, one sample per subscriber per update.
 *   Baseline: the same updates through raw Redis pub/sub relayed to S plain WebSocket clients. Alternating rounds.
 * Latencies in HDR histograms (ms). Bounded to about two minutes; ends with one JSON line.
 * BENCH_SERVER_NODE_ARGS adds Node flags to the server children (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { loadConfig } from '@weir/config';
import { createClient, type Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { eventChannel } from '../apps/control-plane/src/events/events';
import type { DeploymentMetrics } from '../apps/control-plane/src/metrics/deployment-metrics';
import { deleteEventKeys, insertDeployment } from '../test/control-plane/graphql/support';
import { createTestTenant } from '../test/control-plane/support/tenants';
import { cpuBetween, postgresBackendCpu } from './_pg-backends';
import { LatencyRecorder, latencyColumns, nowMs, printJsonLine, printTable, ratio, runFixedRate, type LatencySummary } from './_latency';
import { numberArgument as argument } from './_arguments';

const RATE = argument('rate', 1_000);
const SUBSCRIBERS = argument('subscribers', 1_000);
const UPDATES = argument('updates', 20);
const REST_WARMUP_MS = 2_000;
const REST_PASS_MS = 6_000;
const UPDATE_EVERY_MS = 250;
const CONNECT_BATCH = 50;

const prefix = `bench-api-${randomBytes(3).toString('hex')}`;
const SERVER_LOG = join(tmpdir(), `weir-${prefix}-control-plane.log`);
const config = loadConfig({ ...process.env, WEIR_QUEUE_PREFIX: prefix, WEIR_LOG_LEVEL: 'warn' });

interface ServerChild {
  readonly child: ChildProcess;
  readonly port: number;
}

async function startServer(mode: 'weir' | 'fanout', channel = ''): Promise<ServerChild> {
  // The control plane logs as users run it (info: a line per request), into a file rather than over the table.
  const stdout = mode === 'weir' ? openSync(SERVER_LOG, 'w') : 'inherit';
  const child = fork(`${__dirname}/_api-server.ts`, [mode, channel], {
    execArgv: ['-r', '@swc-node/register', ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)],
    env: { ...process.env, WEIR_QUEUE_PREFIX: prefix },
    stdio: ['ignore', stdout, 'inherit', 'ipc'],
  });
  if (typeof stdout === 'number') closeSync(stdout);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { child, port };
}

/** The child's CPU time so far (user + system, µs): divided by the requests of a pass, it holds on a busy machine. */
async function serverCpuMicros(server: ServerChild): Promise<number> {
  const answer = new Promise<number>((resolve) => {
    const onMessage = (m: { cpu?: NodeJS.CpuUsage }) => {
      if (!m.cpu) return;
      server.child.off('message', onMessage);
      resolve(m.cpu.user + m.cpu.system);
    };
    server.child.on('message', onMessage);
  });
  server.child.send({ cpu: true });
  return answer;
}

async function stopServer(server: ServerChild): Promise<void> {
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  server.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
}

/** One fixed-rate pass of GETs; latency from each request's scheduled time to the end of its response. */
async function restPass(port: number, path: string, key: string | undefined, durationMs: number, warmupMs = 0): Promise<{ summary: LatencySummary; errors: number; sent: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const recorder = new LatencyRecorder();
  const inFlight = new Set<Promise<void>>();
  let errors = 0;
  const headers = key ? { authorization: `Bearer ${key}` } : {};
  const report = await runFixedRate({ ratePerSec: RATE, durationMs, warmupMs, maxBatch: 100 }, (batch) => {
    for (let i = 0; i < batch.count; i++) {
      const scheduled = batch.scheduledMs[i];
      const measured = batch.firstSeq + i >= Math.floor((RATE * warmupMs) / 1000);
      const done = new Promise<void>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
          res.resume();
          res.once('end', () => {
            if (res.statusCode !== 200) errors++;
            if (measured) recorder.record(nowMs() - scheduled);
            resolve();
          });
        });
        req.once('error', () => {
          errors++;
          resolve();
        });
        req.end();
      });
      inFlight.add(done);
      void done.then(() => inFlight.delete(done));
    }
  });
  await Promise.all(inFlight);
  agent.destroy();
  const summary = recorder.summary();
  recorder.destroy();
  return { summary, errors, sent: report.sent };
}

/** Where one side's arrivals go: a histogram of arrival − publish time, and a count. */
class Arrivals {
  recorder = new LatencyRecorder();
  count = 0;

  readonly record = (publishedAt: number): void => {
    this.count++;
    this.recorder.record(Date.now() - publishedAt);
  };

  reset(): void {
    this.recorder.destroy();
    this.recorder = new LatencyRecorder();
    this.count = 0;
  }
}

/** S graphql-ws clients, each subscribed to the deployment's metrics; resolves once the server accepted them all. */
async function connectGraphqlSubscribers(port: number, key: string, deploymentId: string, arrivals: Arrivals, probe: () => Promise<void>): Promise<Client[]> {
  const clients: Client[] = [];
  const live: Promise<void>[] = [];
  const query = 'subscription ($id: ID!) { deploymentMetrics(deploymentId: $id) { at } }';
  for (let start = 0; start < SUBSCRIBERS; start += CONNECT_BATCH) {
    const connected: Promise<void>[] = [];
    for (let i = start; i < Math.min(start + CONNECT_BATCH, SUBSCRIBERS); i++) {
      let onConnected!: () => void;
      connected.push(new Promise<void>((resolve) => (onConnected = resolve)));
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${key}` },
        lazy: false,
        retryAttempts: 0,
        on: { connected: () => onConnected() },
      });
      clients.push(client);
      live.push(
        new Promise<void>((resolve, reject) => {
          client.subscribe<{ deploymentMetrics: { at: string } }>(
            { query, variables: { id: deploymentId } },
            {
              // The first message (a probe) proves the subscription is live on the server.
              next: (result) => {
                const at = result.data?.deploymentMetrics.at;
                if (at) arrivals.record(Date.parse(at));
                resolve();
              },
              error: (err) => reject(new Error(`subscription refused: ${JSON.stringify(err)}`)),
              complete: () => undefined,
            },
          );
        }),
      );
    }
    await Promise.all(connected);
  }
  let allLive = false;
  const settled = Promise.all(live).then(() => (allLive = true));
  while (!allLive) {
    await probe();
    await Promise.race([settled, new Promise((r) => setTimeout(r, 200))]);
  }
  return clients;
}

async function connectPlainSubscribers(port: number, arrivals: Arrivals): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  const opened: Promise<void>[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`);
    sockets.push(socket);
    socket.on('message', (data) => arrivals.record((JSON.parse(String(data)) as { at: number }).at));
    opened.push(new Promise((resolve, reject) => (socket.once('open', () => resolve()), socket.once('error', reject))));
  }
  await Promise.all(opened);
  return sockets;
}

/** Publishes UPDATES updates, each stamped with its publish time, and waits until all arrived (or 5 s). */
async function deliveryRound(redis: Redis, channel: string, template: DeploymentMetrics, arrivals: Arrivals): Promise<LatencySummary> {
  arrivals.reset();
  for (let i = 0; i < UPDATES; i++) {
    await redis.publish(channel, JSON.stringify({ ...template, at: Date.now() }));
    await new Promise((r) => setTimeout(r, UPDATE_EVERY_MS));
  }
  const deadline = Date.now() + 5_000;
  while (arrivals.count < UPDATES * SUBSCRIBERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return arrivals.recorder.summary();
}

async function main(): Promise<void> {
  const benchStart = nowMs();
  const tenant = await createTestTenant(config, { name: 'bench api' });
  const deploymentId = `bench-${randomBytes(4).toString('hex')}`;
  const servers: ServerChild[] = [];
  const redis = new Redis(config.WEIR_REDIS_URL);
  try {
    await insertDeployment(config, tenant.tenantId, deploymentId);
    const weir = await startServer('weir');
    servers.push(weir);
    // Twenty SLOs, so the list call returns a full page.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${weir.port}/v1/slos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.writeKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `slo ${i}`, deploymentId, thresholdMs: 100 + i, target: 0.99 }),
      });
      if (res.status !== 201) throw new Error(`seeding SLOs: ${res.status} ${await res.text()}`);
    }

    // REST: warm-up pass of each, then A B A B.
    const restRows: Record<string, number | string>[] = [];
    const rest = { weir: [] as LatencySummary[], health: [] as LatencySummary[] };
    const cpuPerRequest = { weir: [] as number[], health: [] as number[] };
    const pgCpuPerRequest = { weir: [] as number[], health: [] as number[] };
    const pgPort = Number(new URL(config.WEIR_PG_URL).port || 5432);
    let restErrors = 0;
    const weirPass = (ms: number, warm = 0) => restPass(weir.port, '/v1/slos?limit=20', tenant.readKey, ms, warm);
    const healthPass = (ms: number, warm = 0) => restPass(weir.port, '/health', undefined, ms, warm);
    await weirPass(REST_WARMUP_MS);
    await healthPass(REST_WARMUP_MS);
    for (let pass = 1; pass <= 2; pass++) {
      for (const [name, run] of [['GET /v1/slos (auth, RLS)', weirPass], ['GET /health (baseline)', healthPass]] as const) {
        const cpuBefore = await serverCpuMicros(weir);
        const pgBefore = await postgresBackendCpu(weir.child.pid ?? 0, pgPort);
        const { summary, errors, sent } = await run(REST_PASS_MS);
        const cpuUs = (await serverCpuMicros(weir)) - cpuBefore;
        const pgUs = cpuBetween(pgBefore, await postgresBackendCpu(weir.child.pid ?? 0, pgPort));
        restErrors += errors;
        const side = name.startsWith('GET /v1') ? 'weir' : 'health';
        rest[side].push(summary);
        cpuPerRequest[side].push(cpuUs / sent);
        if (pgUs !== undefined) pgCpuPerRequest[side].push(pgUs / sent);
        restRows.push({
          pass, call: name, rps: RATE, sent, errors, ...latencyColumns(summary), server_cpu_us_per_req: Math.round(cpuUs / sent),
          postgres_cpu_us_per_req: pgUs === undefined ? 'n/a' : Math.round(pgUs / sent),
        });
      }
    }
    printTable(restRows, `REST at ${RATE} requests/s, latency from the scheduled send time (ms); server log: ${SERVER_LOG}`);

    // Subscriptions.
    const channel = eventChannel(prefix, 'metrics', tenant.tenantId, deploymentId);
    // The baseline relays its own channel, so each side's round reaches only its own subscribers.
    const rawChannel = `${channel}:raw`;
    const fanoutServer = await startServer('fanout', rawChannel);
    servers.push(fanoutServer);
    const template: DeploymentMetrics = {
      tenantId: tenant.tenantId,
      deploymentId,
      at: 0,
      fromMs: Date.now() - 1000,
      toMs: Date.now(),
      subtasks: 4,
      recordsInPerSec: 12_000,
      recordsOutPerSec: 11_500,
      busyMsPerSec: { max: 620, mean: 410 },
      backpressuredMsPerSec: { max: 40, mean: 12 },
      eventTimeLatency: { samples: 12_000, p50: 12.1, p95: 40.3, p99: 88.7, max: 140.2 },
      watermarkLagMs: 250,
      heavyKeys: Array.from({ length: 10 }, (_, i) => ({ key: `user-${i}`, keyGroup: i * 7, count: 1000 - i * 50, error: 3 })),
      deadLettered: 0,
      sourceBacklog: null,
    };
    const weirArrivals = new Arrivals();
    const rawArrivals = new Arrivals();
    const connectStart = nowMs();
    const clients = await connectGraphqlSubscribers(weir.port, tenant.readKey, deploymentId, weirArrivals, async () => {
      await redis.publish(channel, JSON.stringify({ ...template, at: Date.now() }));
    });
    const connectMs = nowMs() - connectStart;
    const sockets = await connectPlainSubscribers(fanoutServer.port, rawArrivals);

    const sub = { weir: [] as LatencySummary[], raw: [] as LatencySummary[] };
    const subRows: Record<string, number | string>[] = [];
    for (let round = 1; round <= 2; round++) {
      for (const side of ['weir', 'raw'] as const) {
        const arrivals = side === 'weir' ? weirArrivals : rawArrivals;
        const summary = await deliveryRound(redis, side === 'weir' ? channel : rawChannel, template, arrivals);
        sub[side].push(summary);
        subRows.push({
          round,
          side: side === 'weir' ? 'graphql-ws (Weir)' : 'raw pub/sub -> ws',
          subscribers: SUBSCRIBERS,
          updates: UPDATES,
          delivered: arrivals.count,
          expected: UPDATES * SUBSCRIBERS,
          ...latencyColumns(summary),
        });
      }
    }
    printTable(subRows, `Delivery of a metrics update to ${SUBSCRIBERS} subscribers, publish -> arrival (ms)`);
    await Promise.all(clients.map((client) => client.dispose()));
    for (const socket of sockets) socket.terminate();
    weirArrivals.recorder.destroy();
    rawArrivals.recorder.destroy();

    const worst = (xs: LatencySummary[], f: (s: LatencySummary) => number) => Math.max(...xs.map(f));
    const restP99 = worst(rest.weir, (s) => s.p99);
    const healthP99 = worst(rest.health, (s) => s.p99);
    const subP99 = worst(sub.weir, (s) => s.p99);
    const rawP99 = worst(sub.raw, (s) => s.p99);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const restCpu = mean(cpuPerRequest.weir);
    const healthCpu = mean(cpuPerRequest.health);
    const restPgCpu = pgCpuPerRequest.weir.length ? Math.round(mean(pgCpuPerRequest.weir)) : null;
    process.stdout.write(
      `REST p99 ${restP99.toFixed(2)} ms vs /health ${healthP99.toFixed(2)} ms; server CPU ${restCpu.toFixed(0)} µs/request vs ${healthCpu.toFixed(0)} ` +
        `(+ Postgres ${restPgCpu ?? 'n/a'} µs); ` +
        `delivery p99 ${subP99.toFixed(2)} ms vs raw ${rawP99.toFixed(2)} ms; load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs; ` +
        `${SUBSCRIBERS} subscribers live in ${(connectMs / 1000).toFixed(1)} s; total ${((nowMs() - benchStart) / 1000).toFixed(0)} s; ` +
        `figures are the worse of 2 passes/rounds\n`,
    );
    printJsonLine({
      bench: 'api',
      rest_rps: RATE,
      rest_p99_ms: round2(restP99),
      subscribers: SUBSCRIBERS,
      sub_delivery_p99_ms: round2(subP99),
      rest_errors: restErrors,
      health_p99_ms: round2(healthP99),
      rest_p99_vs_health: round2(ratio(restP99, healthP99)),
      rest_server_cpu_us_per_req: Math.round(restCpu),
      health_server_cpu_us_per_req: Math.round(healthCpu),
      rest_cpu_vs_health: round2(ratio(restCpu, healthCpu)),
      rest_postgres_cpu_us_per_req: restPgCpu,
      load_avg_1m: round2(loadavg()[0]),
      raw_ws_delivery_p99_ms: round2(rawP99),
      sub_delivery_p99_vs_raw_ws: round2(ratio(subP99, rawP99)),
      runs: 2,
    });
  } finally {
    redis.disconnect();
    await Promise.all(servers.map(stopServer));
    await tenant.cleanup();
    await deleteEventKeys(config);
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench api failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
