/** Reading the fraud job's topics back: alerts as they arrive (with latency), where transactions landed, and acks. */
import type { KafkaAdmin, KafkaConnector, KafkaReader } from '@weir/kafka';
import { LatencyRecorder } from '@weir/metrics';
import type { Alert, RuleAck } from '../../examples/fraud-detection';

type EndOffsets = readonly { partition: number; latest: string }[];

export interface AlertCollector {
  readonly latency: LatencyRecorder;
  start(): Promise<void>;
  values(): readonly Alert[];
  /** Reads until every partition is at least at `end`. */
  drain(end: EndOffsets): Promise<void>;
  close(): Promise<void>;
}

/** Reads alerts from the start while the demo runs; event-time latency = read time − the transaction's event time. */
export function collectAlerts(kafka: KafkaConnector, topic: string, partitions: number): AlertCollector {
  const reader = kafka.reader({
    readerId: `demo-alerts-${process.pid}`,
    assignments: Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
  });
  const alerts: Alert[] = [];
  const latency = new LatencyRecorder();
  let running = true;
  let loop: Promise<void> = Promise.resolve();
  const pollOnce = async (waitMs: number) => {
    const batch = await reader.poll(5_000, waitMs);
    const readAt = Date.now();
    for (const r of batch) {
      const alert = JSON.parse(r.value!.toString()) as Alert;
      alerts.push(alert);
      latency.record(readAt - alert.ts);
    }
  };
  return {
    latency,
    async start() {
      await reader.start();
      loop = (async () => {
        while (running) await pollOnce(200);
      })();
    },
    values: () => alerts,
    async drain(end) {
      running = false;
      await loop;
      const behind = () => end.some(({ partition, latest }) => BigInt(reader.positions().get(`${topic}:${partition}`) ?? '0') < BigInt(latest));
      const deadline = Date.now() + 30_000;
      while (behind() && Date.now() < deadline) await pollOnce(200);
    },
    async close() {
      running = false;
      await loop;
      await reader.close();
    },
  };
}

/** Reads a topic from its start to its current end. */
async function readAll(kafka: KafkaConnector, admin: KafkaAdmin | null, topic: string, partitions: number, end?: EndOffsets) {
  const reader: KafkaReader = kafka.reader({
    readerId: `demo-read-${topic}-${process.pid}`,
    assignments: Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
  });
  await reader.start();
  const until = end ?? (await admin!.offsets(topic));
  const records = [];
  try {
    const deadline = Date.now() + 60_000;
    const behind = () => until.some(({ partition, latest }) => BigInt(reader.positions().get(`${topic}:${partition}`) ?? '0') < BigInt(latest));
    while (behind() && Date.now() < deadline) records.push(...(await reader.poll(10_000, 200)));
    if (behind()) throw new Error(`could not read ${topic} to its end within 60 s`);
  } finally {
    await reader.close();
  }
  return records;
}

/** txId → the partition and offset it was written at. */
export async function readOffsets(kafka: KafkaConnector, admin: KafkaAdmin, topic: string): Promise<Map<string, { partition: number; offset: bigint }>> {
  const end = await admin.offsets(topic);
  const out = new Map<string, { partition: number; offset: bigint }>();
  for (const r of await readAll(kafka, admin, topic, end.length, end)) {
    out.set((JSON.parse(r.value!.toString()) as { txId: string }).txId, { partition: r.partition, offset: BigInt(r.offset) });
  }
  return out;
}

/**
 * rule id → routing subtask → its input position when it applied `version` of the rule (absent when the job's acks
 * do not carry positions: the check then finds the switch points itself).
 */
export async function readAcks(kafka: KafkaConnector, admin: KafkaAdmin, topic: string, version: number): Promise<Map<string, Map<number, Readonly<Record<string, string>>>>> {
  const out = new Map<string, Map<number, Readonly<Record<string, string>>>>();
  for (const r of await readAll(kafka, admin, topic, 1)) {
    // inputPosition: where the routing subtask was in its transactions input (acks written before it existed lack it).
    const ack = JSON.parse(r.value!.toString()) as RuleAck & { inputPosition?: Readonly<Record<string, string>> };
    if (ack.outcome !== 'applied' || ack.shadow || ack.ruleVersion !== version || !ack.ruleId || !ack.inputPosition) continue;
    let bySubtask = out.get(ack.ruleId);
    if (!bySubtask) out.set(ack.ruleId, (bySubtask = new Map()));
    if (!bySubtask.has(ack.subtask)) bySubtask.set(ack.subtask, ack.inputPosition);
  }
  return out;
}
