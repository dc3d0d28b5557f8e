import { randomUUID } from 'node:crypto';
import type { Batch, Consumer, Kafka } from 'kafkajs';
import type { ConsumedRecord, KafkaReader, PartitionAssignment, ReaderOptions, StartOffset } from './contract';
import { type KafkaError, KafkaUsageError, wrapKafkaError } from './errors';
import { explicitAssigner } from './explicit-assigner';
import type { KafkajsAdmin } from './kafkajs-admin';
import { partitionKey, RecordBuffer } from './record-buffer';
import { type ResolvedAssignments, resolveAssignments } from './resolve-assignments';
import { Signal } from './signal';
import { toRecords } from './to-records';
import { fetchTuning, groupTuning, readerDefaults } from './tuning';

interface AssignedPartition {
  readonly topic: string;
  readonly partition: number;
  readonly key: string;
}

/**
 * The consumer groups of readers whose ids start with `readerIdPrefix` start with this (a group only hands out the
 * explicit assignment; nothing is committed to it). ACLs on groups are granted by it.
 */
export function readerGroupIdPrefix(readerIdPrefix: string): string {
  return `weir-reader.${readerIdPrefix}`;
}

/**
 * A pull reader over a kafkajs consumer. kafkajs pushes fetched batches into a bounded buffer (eachBatch, never per
 * record); poll() drains it. A full buffer pauses the partitions and holds eachBatch (heartbeating) until poll()
 * drains it below half, which resumes them. Holding matters: with every partition paused kafkajs sleeps a whole
 * maxWaitTime before fetching again, a stall per pause that cost most of the throughput when measured.
 *
 * Offsets: the reader never commits. Each kafkajs consumer joins a group of its own (so nothing is shared or
 * balanced), gets exactly the wanted partitions from the explicit assigner, and is seeked to the reader's own fetch
 * positions whenever it (re)joins. Reassignment replaces the consumer; every kafkajs callback carries the
 * generation it belongs to, and anything from an older generation is ignored.
 */
export class KafkajsReader implements KafkaReader {
  private readonly buffer = new RecordBuffer();
  private readonly arrivals = new Signal();
  private readonly drained = new Signal();
  /** The next offset kafkajs should deliver per partition; anything below it is a stale fetch. */
  private readonly fetchPositions = new Map<string, bigint>();
  private readonly highWatermarks = new Map<string, bigint>();
  private readonly maxBuffered: number;
  private readonly resumeAt: number;
  private readonly groupPrefix: string;
  private assigned: AssignedPartition[] = [];
  private topics: string[] = [];
  /** Partitions assigned to the consumer but not read (ReaderOptions.standby), by key. */
  private readonly standby = new Map<string, { readonly topic: string; readonly partition: number }>();
  /**
   * Partitions activated since the consumer joined: a batch of one must start at the expected offset. A fetch issued
   * before a deactivate can arrive after the next activate, from further on; taken, it would skip what lies between.
   */
  private readonly strict = new Set<string>();
  private consumer: Consumer | null = null;
  private generation = 0;
  private paused = false;
  private state: 'new' | 'starting' | 'started' | 'closed' = 'new';
  private failure: KafkaError | null = null;
  private reassigning: Promise<void> = Promise.resolve();

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ReaderOptions,
    private readonly admin: KafkajsAdmin,
    private readonly brokers: readonly string[],
  ) {
    this.maxBuffered = options.maxBufferedRecords ?? readerDefaults.maxBufferedRecords;
    if (!Number.isInteger(this.maxBuffered) || this.maxBuffered < 1) {
      throw new KafkaUsageError(`maxBufferedRecords must be a whole number ≥ 1, not ${this.maxBuffered}`);
    }
    this.resumeAt = Math.floor(this.maxBuffered * readerDefaults.resumeFraction);
    // Unique per reader instance: a crashed predecessor's group can never delay this one's join.
    this.groupPrefix = `${readerGroupIdPrefix(options.readerId)}.${randomUUID().slice(0, 8)}`;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new KafkaUsageError(`Reader ${this.options.readerId} was already started`);
    this.state = 'starting';
    try {
      await this.replaceConsumer(await this.resolve(this.options.assignments));
    } catch (error) {
      if (this.state === 'starting') this.state = 'new';
      throw error;
    }
    // close() may have run meanwhile; it wins.
    if (this.state === 'starting') this.state = 'started';
  }

  async poll(maxRecords: number, maxWaitMs: number): Promise<ConsumedRecord[]> {
    this.assertStarted('poll');
    if (this.buffer.size === 0 && !this.failure && maxWaitMs > 0) {
      await this.arrivals.wait(maxWaitMs);
      // Woken by the first partition of a fetch response: let kafkajs hand over the rest of it (one eachBatch per
      // partition, a microtask apart) so a poll takes the whole response, not one partition's few records. Over the
      // 128-partition exchange topic, taking them one by one made a batch per partition downstream.
      if (this.buffer.size > 0 && this.buffer.size < maxRecords) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.buffer.size === 0 && this.failure) throw this.failure;
    const records = this.buffer.take(maxRecords);
    if (this.paused && this.buffer.size <= this.resumeAt) {
      this.setPaused(false);
      this.drained.notify();
    }
    return records;
  }

  async reassign(assignments: readonly PartitionAssignment[]): Promise<void> {
    this.assertStarted('reassign');
    // One at a time, in call order: two consumer swaps must not interleave.
    const previous = this.reassigning;
    const next = previous.then(async () => {
      this.assertStarted('reassign');
      // Resolve first: a bad assignment leaves the reader reading as before.
      await this.replaceConsumer(await this.resolve(assignments));
    });
    this.reassigning = next.catch(() => undefined);
    await next;
  }

  async activate(topic: string, partition: number, offset: StartOffset): Promise<void> {
    this.assertStarted('activate');
    const key = partitionKey(topic, partition);
    if (!this.standby.has(key)) throw new KafkaUsageError(`Reader ${this.options.readerId} cannot activate ${key}: it is not a standby partition`);
    // An exact offset needs no round trip to the broker (the partition is known to exist: it is assigned).
    const resolved = /^\d+$/.test(offset) ? null : await this.resolve([{ topic, partition, offset }]);
    if (!this.standby.has(key)) return; // activated meanwhile by another call
    const start = resolved ? resolved.start.get(key)! : offset;
    this.standby.delete(key);
    this.strict.add(key);
    this.assigned.push({ topic, partition, key });
    this.fetchPositions.set(key, BigInt(start));
    // Lag reads 0 until the first fetch says where the log ends.
    this.highWatermarks.set(key, resolved?.logEnd.get(key) ?? BigInt(start));
    this.buffer.track(key, start);
    const consumer = this.consumer;
    if (!consumer) return; // the next join seeks it (seekAll) and leaves it unpaused
    try {
      consumer.seek({ topic, partition, offset: start });
      // While backpressure pauses everything, the resume that ends it takes this partition along.
      if (!this.paused) consumer.resume([{ topic, partitions: [partition] }]);
    } catch {
      // kafkajs is between a crash and its restart; the rejoin seeks and pauses from our state (seekAll).
    }
  }

  deactivate(topic: string, partition: number): void {
    this.assertStarted('deactivate');
    const key = partitionKey(topic, partition);
    if (this.standby.has(key)) return;
    this.standby.set(key, { topic, partition });
    this.assigned = this.assigned.filter((a) => a.key !== key);
    this.fetchPositions.delete(key);
    this.highWatermarks.delete(key);
    this.buffer.forget(key);
    // A fetch already under way may still deliver it: accept() drops what has no fetch position.
    const consumer = this.consumer;
    if (!consumer || this.paused) return;
    try {
      consumer.pause([{ topic, partitions: [partition] }]);
    } catch {
      // See activate.
    }
  }

  positions(): ReadonlyMap<string, string> {
    return this.buffer.positions();
  }

  lag(): ReadonlyMap<string, number> {
    const lag = new Map<string, number>();
    for (const [key, position] of this.buffer.positions()) {
      const behind = (this.highWatermarks.get(key) ?? 0n) - BigInt(position);
      lag.set(key, behind > 0n ? Number(behind) : 0);
    }
    return lag;
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.generation++;
    const consumer = this.consumer;
    this.consumer = null;
    this.arrivals.notify();
    this.drained.notify();
    await Promise.allSettled([consumer?.disconnect(), this.admin.close()]);
    // A reassignment in flight notices the new generation and disconnects what it created.
    await this.reassigning;
  }

  private assertStarted(what: string): void {
    if (this.state !== 'started') {
      throw new KafkaUsageError(`Reader ${this.options.readerId} cannot ${what}: it is ${this.state}, not started`);
    }
  }

  private resolve(assignments: readonly PartitionAssignment[]): Promise<ResolvedAssignments> {
    return resolveAssignments(assignments, (topic) => this.admin.offsets(topic));
  }

  private async replaceConsumer(resolved: ResolvedAssignments): Promise<void> {
    if (this.state === 'closed') return; // closed while the assignment was being resolved
    const generation = ++this.generation;
    const previous = this.consumer;
    this.consumer = null;
    this.drained.notify();
    if (previous) await previous.disconnect().catch(() => undefined);

    this.buffer.reset(resolved.start);
    this.fetchPositions.clear();
    for (const [key, offset] of resolved.start) this.fetchPositions.set(key, BigInt(offset));
    this.highWatermarks.clear();
    for (const [key, end] of resolved.logEnd) this.highWatermarks.set(key, end);
    this.assigned = Object.entries(resolved.byTopic).flatMap(([topic, partitions]) =>
      partitions.map((partition) => ({ topic, partition, key: partitionKey(topic, partition) })),
    );
    // The consumer is assigned the standby partitions too (never fetched: paused from its join on): every partition
    // of ReaderOptions.standby that this assignment does not read.
    this.standby.clear();
    for (const { topic, partition } of this.options.standby ?? []) {
      const key = partitionKey(topic, partition);
      if (!this.fetchPositions.has(key)) this.standby.set(key, { topic, partition });
    }
    const byTopic: Record<string, number[]> = {};
    for (const [topic, partitions] of Object.entries(resolved.byTopic)) byTopic[topic] = [...partitions];
    for (const { topic, partition } of this.standby.values()) (byTopic[topic] ??= []).push(partition);
    this.strict.clear();
    this.topics = Object.keys(byTopic);
    this.paused = false;
    this.failure = null;
    if (this.topics.length === 0) return;

    const consumer = this.kafka.consumer({
      groupId: `${this.groupPrefix}.${generation}`,
      partitionAssigners: [explicitAssigner(byTopic)],
      readUncommitted: this.options.isolation === 'read_uncommitted',
      ...fetchTuning,
      ...groupTuning,
    });
    const current = (): boolean => generation === this.generation;
    // Emitted synchronously inside join/sync, before the first fetch of the new generation: seeks land in time.
    consumer.on(consumer.events.GROUP_JOIN, () => {
      if (current()) this.seekAll(consumer);
    });
    // Batches holding only transaction markers or aborted records never reach eachBatch, but still move offsets.
    consumer.on(consumer.events.START_BATCH_PROCESS, ({ payload }) => {
      if (current() && payload.batchSize === 0) {
        this.accept(payload.topic, payload.partition, payload.firstOffset, payload.lastOffset, payload.highWatermark, null);
      }
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (current() && !payload.restart) this.fail(wrapKafkaError(payload.error, `reading (${this.options.readerId})`));
    });

    try {
      await consumer.connect();
      await consumer.subscribe({ topics: this.topics, fromBeginning: true });
      if (!current()) {
        await consumer.disconnect();
        return;
      }
      this.consumer = consumer;
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch, heartbeat, isRunning }) => {
          if (!current()) return;
          this.onBatch(batch);
          // Backpressure: hold the fetch loop while the buffer is full (see the class comment).
          while (this.paused && current() && isRunning()) {
            await this.drained.wait(1_000);
            try {
              await heartbeat();
            } catch {
              break; // a rebalance: kafkajs rejoins, and the join seeks back to fetchPositions
            }
          }
        },
      });
    } catch (error) {
      this.consumer = null;
      await consumer.disconnect().catch(() => undefined);
      throw wrapKafkaError(error, `starting reader ${this.options.readerId}`, this.brokers);
    }
  }

  private seekAll(consumer: Consumer): void {
    for (const { topic, partition, key } of this.assigned) {
      const offset = this.fetchPositions.get(key);
      if (offset !== undefined) consumer.seek({ topic, partition, offset: offset.toString() });
    }
    // A rejoin after a crash starts unpaused inside kafkajs; keep honouring the buffer's backpressure.
    if (this.paused) consumer.pause(this.topics.map((topic) => ({ topic })));
    else this.pauseStandby(consumer);
  }

  private pauseStandby(consumer: Consumer): void {
    const byTopic = new Map<string, number[]>();
    for (const { topic, partition } of this.standby.values()) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
    if (byTopic.size > 0) consumer.pause([...byTopic].map(([topic, partitions]) => ({ topic, partitions })));
  }

  private onBatch(batch: Batch): void {
    this.accept(batch.topic, batch.partition, batch.firstOffset(), batch.lastOffset(), batch.highWatermark, batch);
  }

  /**
   * `firstOffset`: where the fetched batch starts, its transaction markers and aborted records included (kafkajs's
   * firstOffset), which `batch.messages` leaves out. A re-activated partition (strict) takes only a batch that starts
   * at or below its fetch position: one that starts above it is a fetch from before the re-activation. The first
   * delivered message may still lie above the position, legitimately, when the position is a transaction marker (an
   * exactly-once exchange): judged by it, every batch of the partition was dropped and the partition stalled.
   */
  private accept(topic: string, partition: number, firstOffset: string | null, lastOffset: string, highWatermark: string, batch: Batch | null) {
    const key = partitionKey(topic, partition);
    const expected = this.fetchPositions.get(key);
    if (expected === undefined) return;
    const end = BigInt(lastOffset) + 1n;
    if (end <= expected) return;
    if (this.strict.has(key) && firstOffset !== null && BigInt(firstOffset) > expected) return;
    let records: ConsumedRecord[] = [];
    if (batch && batch.messages.length > 0) {
      let messages = batch.messages;
      // Only a stale fetch starts below the expected offset; the common case costs one comparison per batch.
      if (BigInt(messages[0].offset) < expected) messages = messages.filter((m) => BigInt(m.offset) >= expected);
      records = toRecords(topic, partition, messages);
    }
    this.fetchPositions.set(key, end);
    this.highWatermarks.set(key, BigInt(highWatermark));
    this.buffer.push(key, records, end.toString());
    if (!this.paused && this.buffer.size >= this.maxBuffered) this.setPaused(true);
    if (records.length > 0) this.arrivals.notify();
  }

  private setPaused(paused: boolean): void {
    this.paused = paused;
    const consumer = this.consumer;
    if (!consumer) return;
    const topics = this.topics.map((topic) => ({ topic }));
    try {
      if (paused) consumer.pause(topics);
      else {
        consumer.resume(topics);
        this.pauseStandby(consumer);
      }
    } catch {
      // kafkajs is between a crash and its restart; the next join re-applies `paused` (see seekAll).
    }
  }

  private fail(error: KafkaError): void {
    this.failure = error;
    this.arrivals.notify();
  }
}
