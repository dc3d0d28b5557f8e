/**
 * Profiling aid for the fraud-detection job's evaluation (not a benchmark; no JSON line):
 *   node -r @swc-node/register bench/_profile-fraud.ts [--count N] [--rate R] [--state memory|lsm|changelog]
 *     [--rules demo|long] [--chunk N] [--profile FILE]
 * Runs examples/fraud-detection in this process (runJob, memory sources and sinks, parallelism 2 as in the demo) over
 * the demo's seeded stream (viral merchant burst), `R` transactions per second of event time, pushed in chunks of
 * `N` (default R/10, as a 100 ms poll would hand them over) with the watermark following (200 ms out-of-orderness).
 * Prints wall time, this process's CPU time (what says more on a shared machine), per-subtask busy time of
 * evaluate-rules, the alert count and a digest of the sorted alerts (to compare two versions of the code exactly).
 * `--rules long` adds hot-key rules with 60 s windows (a viral merchant's window then holds thousands of entries).
 * `--profile FILE` writes a CPU profile of the run (not of start-up and input generation).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob, memoryIoOf } from '@weir/engine';
import { TransactionStream } from '@weir/datagen';
import type { Rule } from '@weir/rules';
import { createStateBackend } from '@weir/state';
import { type Alert, buildInMemoryFraudJob, OPERATOR_IDS } from '../examples/fraud-detection';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
};
const COUNT = Number(arg('count', '20000'));
const RATE = Number(arg('rate', '1000'));
const CHUNK = Number(arg('chunk', String(Math.max(1, Math.round(RATE / 10)))));
const STATE = arg('state', 'changelog');
const RULES = arg('rules', 'demo');
const PROFILE = arg('profile', '');
const OUT_OF_ORDER_MS = 200;

const base = { state: 'ACTIVE', comparison: '>', windowMs: 1_000 } as const;
const demoRules: Rule[] = [
  { ...base, ruleId: 'payer-spend', groupingKeys: ['payer'], aggregateField: 'amount', function: 'SUM', comparison: '>=', limit: 600_000, windowMs: 5_000 },
  { ...base, ruleId: 'merchant-burst', groupingKeys: ['merchant'], function: 'COUNT', limit: 18 },
];
const longRules: Rule[] = [
  { ...base, ruleId: 'merchant-spend', groupingKeys: ['merchant'], aggregateField: 'amount', function: 'AVG', limit: 20_000, windowMs: 60_000 },
  { ...base, ruleId: 'merchant-max', groupingKeys: ['merchant'], aggregateField: 'amount', function: 'MAX', comparison: '>=', limit: 99_000, windowMs: 60_000 },
];

async function main(): Promise<void> {
  const stream = new TransactionStream({
    seed: 7,
    ratePerSec: RATE,
    startTime: 1_800_000_000_000,
    payers: { keys: 20_000, exponent: 0.8 },
    merchants: { keys: 2_000, exponent: 1.0 },
    burst: { field: 'merchant', key: 'm-viral', share: 0.3, atMs: 6_000, forMs: 8_000 },
  });
  const txs = Array.from({ length: COUNT }, (_, i) => stream.at(i));
  const dir = await mkdtemp(join(tmpdir(), 'weir-profile-fraud-'));
  const job = buildInMemoryFraudJob({ maxWindowMs: 60_000, bucketMs: 1_000 });
  const running = await runJob(job, {
    tenantId: 'profile',
    jobId: 'profile-fraud',
    parallelism: { default: 2, transactions: 1, rules: 1 },
    state: (ctx) =>
      STATE === 'memory'
        ? createStateBackend({ kind: 'memory' })
        : createStateBackend({ kind: 'lsm', path: join(dir, `${ctx.operatorId}-${ctx.subtask}`), changelog: STATE === 'changelog' }),
  });
  try {
    memoryIoOf(running).push(OPERATOR_IDS.rules, (RULES === 'long' ? [...demoRules, ...longRules] : demoRules).map((value) => ({ value })));
    await memoryIoOf(running).quiet();
    const session = PROFILE ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    running.metrics();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < txs.length; i += CHUNK) {
      const chunk = txs.slice(i, i + CHUNK);
      memoryIoOf(running).push(OPERATOR_IDS.transactions, chunk.map((value) => ({ value, timestamp: value.ts })));
      memoryIoOf(running).pushWatermark(OPERATOR_IDS.transactions, chunk[chunk.length - 1].ts - OUT_OF_ORDER_MS - 1);
      await memoryIoOf(running).quiet();
    }
    memoryIoOf(running).pushWatermark(OPERATOR_IDS.transactions, txs[txs.length - 1].ts + 60_000);
    await memoryIoOf(running).quiet();
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const busy = running
      .metrics()
      .filter((m) => m.operatorId === OPERATOR_IDS.evaluate)
      .map((m) => `${m.subtask}: ${Math.round((m.busyMsPerSec * (m.toMs - m.fromMs)) / 1000)} ms`);
    if (session) await writeFile(PROFILE, JSON.stringify((await session.post('Profiler.stop')).profile));
    const alerts = memoryIoOf(running).collected(OPERATOR_IDS.alerts).map((r) => r.value as Alert);
    const digest = createHash('sha256')
      .update(alerts.map((a) => JSON.stringify(a)).sort().join('\n'))
      .digest('hex')
      .slice(0, 16);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    console.log(
      `${COUNT} tx at ${RATE}/s event time, rules ${RULES}, state ${STATE}: wall ${wall.toFixed(0)} ms, cpu ${cpuMs.toFixed(0)} ms ` +
        `(${Math.round((COUNT / cpuMs) * 1000)} tx/cpu-s); evaluate-rules busy ${busy.join(', ')}; ${alerts.length} alerts, digest ${digest}`,
    );
  } finally {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
