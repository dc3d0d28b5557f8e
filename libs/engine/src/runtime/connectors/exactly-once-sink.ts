import type { KafkaConnector, KafkaWriter, ProducedRecord } from '@weir/kafka';
import type { KafkaSinkSpec } from '../../sdk/connectors';
import { jobClientId, jobInternalTopicPrefix } from '../topic-names';
import type { StreamRecord } from '../records';
import type { SinkWriter } from './sink-writers';
import { checkRecordSize } from './record-size';

/** One sink subtask's output between two barriers, encoded: what its transaction writes once the checkpoint is durable. */
export interface SinkEpoch {
  readonly sinkId: string;
  readonly subtask: number;
  /** The checkpoint whose barrier closed the epoch; the output is committed once that checkpoint is on S3. */
  readonly checkpointId: number;
  readonly topic: string;
  readonly records: readonly EncodedSinkRecord[];
}

export interface EncodedSinkRecord {
  readonly key: Buffer | null;
  readonly value: Buffer;
  readonly timestamp?: number;
}

export interface SinkIdentity {
  readonly tenantId: string;
  readonly jobId: string;
  readonly sinkId: string;
  readonly subtask: number;
}

/** Stable per (job, sink, subtask): a restarted subtask's writer fences the transactions of its zombie. */
export function sinkTransactionalId(id: SinkIdentity): string {
  return jobClientId(id.tenantId, id.jobId, `${id.sinkId}-${id.subtask}-tx`);
}

/** The compacted topic holding, per sink subtask, the last epoch whose transaction committed. */
export function sinkCommitsTopic(tenantId: string, jobId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}sink-commits`;
}

export const commitMarkerKey = (sinkId: string, subtask: number): string => `${sinkId}/${subtask}`;

/**
 * Writes one epoch in one Kafka transaction together with its commit marker, so "the epoch's records are visible"
 * and "the marker says the epoch committed" are the same fact for a read_committed reader.
 */
export async function commitSinkEpoch(writer: KafkaWriter, epoch: SinkEpoch, commitsTopic: string): Promise<void> {
  const records: ProducedRecord[] = epoch.records.map((r) => ({ topic: epoch.topic, key: r.key, value: r.value, timestamp: r.timestamp }));
  records.push({
    topic: commitsTopic,
    partition: 0,
    key: commitMarkerKey(epoch.sinkId, epoch.subtask),
    value: JSON.stringify({ checkpointId: epoch.checkpointId }),
  });
  const tx = await writer.transaction();
  try {
    await tx.send(records);
    await tx.commit();
  } catch (err) {
    await tx.abort().catch(() => undefined);
    throw err;
  }
}

/**
 * Exactly-once Kafka sink (two-phase, write-ahead): records of the running epoch are encoded and held; the barrier
 * seals the epoch into the checkpoint (pre-commit: the epoch's output becomes part of the durable cut); once the
 * checkpoint's manifest is on S3 the epoch is written and committed in one transaction with its marker. A crash
 * after the manifest but before the commit loses nothing: the restored job commits the epoch from the checkpoint
 * unless the marker shows it committed. Output becomes visible at checkpoint completion.
 */
export class ExactlyOnceKafkaSinkWriter implements SinkWriter {
  private readonly writer: KafkaWriter;
  private readonly topic: string;
  private running: EncodedSinkRecord[] = [];
  private readonly sealed = new Map<number, SinkEpoch>();
  private readonly waiting = new Map<number, (epoch: SinkEpoch) => void>();
  private started: Promise<void> | null = null;

  constructor(
    kafka: KafkaConnector,
    readonly identity: SinkIdentity,
    private readonly spec: KafkaSinkSpec<unknown>,
    private readonly commitsTopic: string,
  ) {
    this.topic = spec.topic;
    this.writer = kafka.writer({ writerId: `${sinkTransactionalId(identity)}-writer`, transactionalId: sinkTransactionalId(identity) });
  }

  /** Registers the transactional id with the broker: aborts whatever a previous incarnation left open. */
  start(): Promise<void> {
    this.started ??= this.writer.start();
    return this.started;
  }

  write(records: readonly StreamRecord[]): Promise<void> {
    const { format, key } = this.spec;
    for (const r of records) {
      const k = key ? key(r.value) : null;
      const keyBytes = k === null || k === undefined ? null : Buffer.from(k);
      const value = Buffer.from(format.encode(r.value));
      checkRecordSize(this.spec, keyBytes, value);
      this.running.push({ key: keyBytes, value, timestamp: Number.isFinite(r.timestamp) ? Math.max(0, Math.floor(r.timestamp)) : undefined });
    }
    return Promise.resolve();
  }

  /** The barrier passed this sink: everything written so far belongs to `checkpointId`'s epoch. */
  seal(checkpointId: number): void {
    // An epoch whose checkpoint failed was never committed: it joins this one, so this checkpoint carries it.
    const records = [...this.sealed.values()].flatMap((e) => e.records);
    for (const r of this.running) records.push(r);
    this.sealed.clear();
    this.running = [];
    const epoch: SinkEpoch = { sinkId: this.identity.sinkId, subtask: this.identity.subtask, checkpointId, topic: this.topic, records };
    this.sealed.set(checkpointId, epoch);
    this.waiting.get(checkpointId)?.(epoch);
    this.waiting.delete(checkpointId);
  }

  /** Resolves with the epoch once the barrier of `checkpointId` has reached this sink. */
  sealedEpoch(checkpointId: number): Promise<SinkEpoch> {
    const epoch = this.sealed.get(checkpointId);
    if (epoch) return Promise.resolve(epoch);
    return new Promise((resolve) => this.waiting.set(checkpointId, resolve));
  }

  /** The checkpoint is durable: commit its epoch. An epoch whose checkpoint failed stays sealed and joins the next. */
  async commit(checkpointId: number): Promise<void> {
    await this.start();
    const epoch = this.sealed.get(checkpointId);
    if (!epoch) return;
    await commitSinkEpoch(this.writer, epoch, this.commitsTopic);
    this.sealed.delete(checkpointId);
  }

  async close(): Promise<void> {
    if (this.started) await this.started.catch(() => undefined);
    await this.writer.close();
  }
}
