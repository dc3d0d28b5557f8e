/**
 * npm run bench -- kafka [--records N] [--runs R] [--partitions P]
 *
 * Raw throughput of Weir's Kafka connector against plain kafkajs used the obvious way, in the same run, alternating:
 * - write: N/2 records of ~100 bytes in batches of 1,000, each batch awaited (KafkaWriter.send vs
 *   producer.sendBatch), into one P-partition topic;
 * - read: the first N records of that topic from the beginning (KafkaReader.poll(1000) vs
 *   consumer.run({ eachBatch })), every value touched, both sides checked to read the same bytes.
 * Figures are medians over R runs after one small warm-up round; ratios are Weir ÷ kafkajs (1.0 = no cost).
 * Then, once each, for information: gzip writes, and the raw consume → produce passthrough of bench/_kafka-baseline
 * (the engine benchmark's baseline).
 * First of all, end-to-end latency at a fixed rate (--rate, default 10,000/s; after a warm-up pass of each side,
 * two alternating passes per side, each 1 s warm-up + 2 s measured):
 * each event carries its scheduled send time, so a stall shows as latency (no coordinated omission); scheduled →
 * handed to the reader's caller, in HDR histograms, Weir writer → reader vs kafkajs producer → eachBatch.
 * Bounded to ~90 s; ends with one JSON line.
 */
import { randomBytes } from 'node:crypto';
import type { Message } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { CompressionTypes, type Kafka, Partitioners } from 'kafkajs';
import { createKafkaConnector, type KafkaConnector, type ProducedRecord } from '@weir/kafka';
import { baselineClient, BASELINE_FETCH, passthrough, rawConsume, rawProduce } from './_kafka-baseline';
import {
  LatencyRecorder,
  type LatencySummary,
  latencyColumns,
  nowMs,
  printJsonLine,
  printTable,
  ratio,
  runFixedRate,
  type ScheduledBatch,
} from './_latency';
import { numberArgument as argument } from './_arguments';

const RECORDS = argument('records', 500_000);
const RUNS = argument('runs', 3);
const PARTITIONS = argument('partitions', 4);
const RATE = argument('rate', 10_000);
const LATENCY_WARMUP_MS = 1_000;
const LATENCY_MS = 4_000;
const BATCH = 1_000;
const VALUE_BYTES = 100;
const BUDGET_MS = 90_000;
const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

const benchStart = performance.now();
const elapsed = (): number => performance.now() - benchStart;

/** Keys k00000000…, values slices of one random block: ~100 bytes each, no two alike in a batch. */
function makeBatches(topic: string, count: number): { weir: ProducedRecord[][]; raw: Message[][] } {
  const block = randomBytes(VALUE_BYTES * 1024);
  const weir: ProducedRecord[][] = [];
  const raw: Message[][] = [];
  for (let start = 0; start < count; start += BATCH) {
    const size = Math.min(BATCH, count - start);
    const w: ProducedRecord[] = new Array(size);
    const r: Message[] = new Array(size);
    for (let i = 0; i < size; i++) {
      const n = start + i;
      const key = Buffer.from(`k${String(n).padStart(8, '0')}`);
      const at = (n % 1024) * VALUE_BYTES;
      const value = block.subarray(at, at + VALUE_BYTES);
      w[i] = { topic, key, value };
      r[i] = { key, value };
    }
    weir.push(w);
    raw.push(r);
  }
  return { weir, raw };
}

async function weirProduce(connector: KafkaConnector, batches: readonly ProducedRecord[][], compression: 'none' | 'gzip') {
  const writer = connector.writer({ writerId: 'bench-writer', compression });
  await writer.start();
  try {
    const started = performance.now();
    for (const batch of batches) await writer.send(batch);
    return performance.now() - started;
  } finally {
    await writer.close();
  }
}

async function weirConsume(connector: KafkaConnector, topic: string, count: number) {
  const reader = connector.reader({
    readerId: 'bench-reader',
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
  });
  const started = performance.now();
  await reader.start();
  let seen = 0;
  let valueBytes = 0;
  try {
    while (seen < count) {
      const records = await reader.poll(Math.min(BATCH, count - seen), 1_000);
      if (records.length === 0 && performance.now() - started > 60_000) {
        throw new Error(`Weir reader saw ${seen}/${count} records of ${topic}`);
      }
      for (const r of records) valueBytes += r.value?.length ?? 0;
      seen += records.length;
    }
    return { elapsedMs: performance.now() - started, valueBytes };
  } finally {
    await reader.close();
  }
}

/** Values of ~100 bytes: [scheduled send time f64][sequence u32][padding]. */
function stampedValues(batch: ScheduledBatch): Buffer[] {
  const values: Buffer[] = new Array(batch.count);
  for (let i = 0; i < batch.count; i++) {
    const value = Buffer.alloc(VALUE_BYTES);
    value.writeDoubleBE(batch.scheduledMs[i], 0);
    value.writeUInt32BE(batch.firstSeq + i, 8);
    values[i] = value;
  }
  return values;
}

/** Records scheduled → received for values past the warm-up; returns how many values it saw. */
function recordLatencies(values: readonly (Buffer | null)[], warmupEvents: number, recorder: LatencyRecorder): number {
  const now = nowMs();
  for (const value of values) {
    if (value && value.readUInt32BE(8) >= warmupEvents) recorder.record(now - value.readDoubleBE(0));
  }
  return values.length;
}

interface LatencyPass {
  readonly durationMs: number;
  readonly events: number;
  readonly warmupEvents: number;
}

function latencyPass(durationMs: number): LatencyPass {
  return {
    durationMs,
    events: Math.floor((RATE * (durationMs + LATENCY_WARMUP_MS)) / 1000),
    warmupEvents: Math.floor((RATE * LATENCY_WARMUP_MS) / 1000),
  };
}

const fixedRate = (pass: LatencyPass) => ({ ratePerSec: RATE, durationMs: pass.durationMs, warmupMs: LATENCY_WARMUP_MS });

async function weirLatency(connector: KafkaConnector, topic: string, pass: LatencyPass, recorder: LatencyRecorder) {
  const reader = connector.reader({
    readerId: 'bench-latency',
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
  });
  const writer = connector.writer({ writerId: 'bench-latency' });
  await Promise.all([reader.start(), writer.start()]);
  try {
    let received = 0;
    const deadline = performance.now() + LATENCY_WARMUP_MS + pass.durationMs + 20_000;
    const reading = (async () => {
      while (received < pass.events && performance.now() < deadline) {
        const records = await reader.poll(BATCH, 50);
        received += recordLatencies(records.map((r) => r.value), pass.warmupEvents, recorder);
      }
    })();
    await runFixedRate(fixedRate(pass), (batch) =>
      writer.send(stampedValues(batch).map((value, i) => ({ topic, key: String(batch.firstSeq + i), value }))),
    );
    await reading;
    if (received < pass.events) throw new Error(`Weir latency run received ${received}/${pass.events}`);
  } finally {
    await Promise.all([reader.close(), writer.close()]);
  }
}

async function kafkajsLatency(kafka: Kafka, topic: string, pass: LatencyPass, recorder: LatencyRecorder) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId: `weir-bench-latency-${randomUUID()}`, ...BASELINE_FETCH });
  await Promise.all([producer.connect(), consumer.connect()]);
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  try {
    let received = 0;
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        received += recordLatencies(batch.messages.map((m) => m.value), pass.warmupEvents, recorder);
        if (received >= pass.events) finish();
      },
    });
    await runFixedRate(fixedRate(pass), async (batch) => {
      const messages = stampedValues(batch).map((value, i) => ({ key: String(batch.firstSeq + i), value }));
      await producer.sendBatch({ topicMessages: [{ topic, messages }], acks: -1, compression: CompressionTypes.None });
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, 20_000)))]);
    clearTimeout(timer);
    if (received < pass.events) throw new Error(`kafkajs latency run received ${received}/${pass.events}`);
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect()]);
  }
}

// A warm-up pass of each side (discarded: the first pass in a process runs cold), then ABBA so drift on a shared
// machine weighs on both sides alike; each side's two measured passes go into one histogram.
const LATENCY_ORDER = ['kafkajs', 'weir', 'weir', 'kafkajs', 'kafkajs', 'weir'] as const;

async function measureLatency(
  connector: KafkaConnector,
  raw: Kafka,
  topicOf: (name: string) => string,
): Promise<{ weir: LatencySummary; kafkajs: LatencySummary }> {
  const recorders = { weir: new LatencyRecorder(), kafkajs: new LatencyRecorder() };
  const discard = new LatencyRecorder();
  try {
    for (const [i, side] of LATENCY_ORDER.entries()) {
      const pass = latencyPass(i < 2 ? 1_000 : LATENCY_MS / 2);
      const recorder = i < 2 ? discard : recorders[side];
      const topic = topicOf(`${side}-${i}`);
      if (side === 'weir') await weirLatency(connector, topic, pass, recorder);
      else await kafkajsLatency(raw, topic, pass, recorder);
    }
    return { weir: recorders.weir.summary(), kafkajs: recorders.kafkajs.summary() };
  } finally {
    recorders.weir.destroy();
    recorders.kafkajs.destroy();
    discard.destroy();
  }
}

const perSecond = (records: number, ms: number): number => (records / ms) * 1000;
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function main(): Promise<void> {
  const connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-bench' });
  const admin = connector.admin();
  const raw = baselineClient(BROKERS);
  const suffix = randomBytes(4).toString('hex');
  const writeTopic = `bench.kafka.${suffix}.write`;
  const sinkTopic = `bench.kafka.${suffix}.sink`;
  // Every latency pass reads its own fresh topic from the beginning.
  const latencyTopic = (name: string) => `bench.kafka.${suffix}.latency-${name}`;
  const latencyNames = LATENCY_ORDER.map((side, i) => `${side}-${i}`);
  const topics = [writeTopic, sinkTopic, ...latencyNames.map(latencyTopic)];
  await admin.ensureTopics(topics.map((topic) => ({ topic, partitions: PARTITIONS })));

  try {
    const latency = await measureLatency(connector, raw, latencyTopic);
    printTable(
      [
        { path: 'Weir writer → reader', ...latencyColumns(latency.weir) },
        { path: 'kafkajs sendBatch → eachBatch', ...latencyColumns(latency.kafkajs) },
      ],
      `End-to-end latency at ${RATE} records/s (scheduled send → handed to the caller), ${LATENCY_MS / 1000} s ` +
        `measured per side in two alternating passes, each after ${LATENCY_WARMUP_MS / 1000} s warm-up`,
    );
    process.stdout.write('\n');

    // Writes are the slow half: each side writes N/2 per run, so the first run's writes hold the N records read.
    const writeRecords = Math.max(BATCH, Math.floor(RECORDS / 2 / BATCH) * BATCH);
    const write = makeBatches(writeTopic, writeRecords);
    const warm = Math.max(1, Math.floor(write.weir.length / 10));

    // Warm-up (not counted): JIT, connections, broker page cache.
    await weirProduce(connector, write.weir.slice(0, warm), 'none');
    await rawProduce(raw, writeTopic, write.raw.slice(0, warm));
    await weirConsume(connector, writeTopic, warm * BATCH);
    await rawConsume(raw, writeTopic, warm * BATCH);

    const writes = { weir: [] as number[], kafkajs: [] as number[] };
    const reads = { weir: [] as number[], kafkajs: [] as number[] };
    let runs = 0;
    let slowestRunMs = 0;
    for (let run = 0; run < RUNS; run++) {
      // Another run only if it fits the budget with room left for the two information rows (~half a run).
      if (runs > 0 && elapsed() + slowestRunMs * 1.6 > BUDGET_MS) break;
      const runStart = performance.now();
      // Alternate who goes first so drift on a shared machine does not favour one side.
      const order = run % 2 === 0 ? (['weir', 'kafkajs'] as const) : (['kafkajs', 'weir'] as const);
      for (const side of order) {
        writes[side].push(
          side === 'weir'
            ? await weirProduce(connector, write.weir, 'none')
            : await rawProduce(raw, writeTopic, write.raw),
        );
      }
      const bytes: Record<string, number> = {};
      for (const side of order) {
        const result =
          side === 'weir' ? await weirConsume(connector, writeTopic, RECORDS) : await rawConsume(raw, writeTopic, RECORDS);
        reads[side].push(result.elapsedMs);
        bytes[side] = result.valueBytes;
      }
      if (bytes.weir !== bytes.kafkajs) throw new Error(`readers disagree: ${bytes.weir} vs ${bytes.kafkajs} value bytes`);
      slowestRunMs = Math.max(slowestRunMs, performance.now() - runStart);
      runs++;
    }

    const produce = perSecond(writeRecords, median(writes.weir));
    const produceRaw = perSecond(writeRecords, median(writes.kafkajs));
    const consume = perSecond(RECORDS, median(reads.weir));
    const consumeRaw = perSecond(RECORDS, median(reads.kafkajs));
    const rows: Record<string, string | number>[] = [
      { path: 'write  Weir KafkaWriter.send', records: writeRecords, runs, median_s: median(writes.weir) / 1000, records_per_s: Math.round(produce) },
      { path: 'write  kafkajs sendBatch', records: writeRecords, runs, median_s: median(writes.kafkajs) / 1000, records_per_s: Math.round(produceRaw) },
      { path: 'read   Weir KafkaReader.poll', records: RECORDS, runs, median_s: median(reads.weir) / 1000, records_per_s: Math.round(consume) },
      { path: 'read   kafkajs eachBatch', records: RECORDS, runs, median_s: median(reads.kafkajs) / 1000, records_per_s: Math.round(consumeRaw) },
    ];

    // For information, once each, while the budget lasts.
    let gzip: number | null = null;
    let piped: number | null = null;
    const infoRecords = Math.max(BATCH, Math.floor(RECORDS / 5 / BATCH) * BATCH);
    // Each information row moves a fifth of N records once: about a twentieth of a run.
    const infoMs = slowestRunMs / 10;
    if (elapsed() + infoMs < BUDGET_MS) {
      const ms = await weirProduce(connector, write.weir.slice(0, infoRecords / BATCH), 'gzip');
      gzip = perSecond(infoRecords, ms);
      rows.push({ path: 'write  Weir, gzip', records: infoRecords, runs: 1, median_s: ms / 1000, records_per_s: Math.round(gzip) });
    }
    if (elapsed() + infoMs < BUDGET_MS) {
      piped = await passthrough({ brokers: BROKERS, sourceTopic: writeTopic, sinkTopic, records: infoRecords });
      rows.push({
        path: 'pipe   kafkajs consume→produce',
        records: infoRecords,
        runs: 1,
        median_s: infoRecords / piped,
        records_per_s: Math.round(piped),
      });
    }

    printTable(
      rows,
      `Kafka connector throughput: records of ${VALUE_BYTES} B, batches of ${BATCH}, ${PARTITIONS} partitions, ` +
        `medians of ${runs} alternating runs (loopback broker, ${Math.round(elapsed() / 1000)} s)`,
    );
    const readerRatio = ratio(consume, consumeRaw);
    const writerRatio = ratio(produce, produceRaw);
    process.stdout.write(`Weir ÷ kafkajs: reader ${readerRatio.toFixed(2)}, writer ${writerRatio.toFixed(2)}\n`);
    printJsonLine({
      bench: 'kafka',
      produce_per_s: Math.round(produce),
      consume_per_s: Math.round(consume),
      reader_vs_kafkajs: Number(readerRatio.toFixed(3)),
      writer_vs_kafkajs: Number(writerRatio.toFixed(3)),
      kafkajs_produce_per_s: Math.round(produceRaw),
      kafkajs_consume_per_s: Math.round(consumeRaw),
      gzip_produce_per_s: gzip === null ? null : Math.round(gzip),
      passthrough_per_s: piped === null ? null : Math.round(piped),
      e2e_p99_ms: Number(latency.weir.p99.toFixed(2)),
      kafkajs_e2e_p99_ms: Number(latency.kafkajs.p99.toFixed(2)),
      runs,
    });
  } finally {
    await admin.deleteTopics(topics);
    await admin.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
