import { createStateBackend, type KeyedStateBackend } from '@weir/state';
import type { KeySplit, RoutingTable } from '../keygroups';
import type { JobDefinition } from '../sdk/graph';
import type { CollectedRecord } from '../runtime/connectors/sink-writers';
import type { KeyGroupMove } from '../runtime/exchange/exchange';
import type { DeadLetter } from '../runtime/ports';
import type { ParallelismOption } from '../runtime/plan';
import { type JobMemoryIo, memoryIoOf } from '../runtime/memory-io';
import { type CheckpointSnapshot, type MemorySourceRecord, runJob, type RunningJob, type SubtaskContext } from '../runtime/run-job';
import { ManualClock } from './manual-clock';

export interface TestDriverOptions {
  readonly parallelism?: ParallelismOption;
  /** Processing time at start, epoch ms. Default 0. */
  readonly startTime?: number;
  /** Defaults to libs/state's in-memory backend on the driver's clock (so TTL follows advanceProcessingTime). */
  readonly state?: (ctx: SubtaskContext, clock: ManualClock) => Promise<KeyedStateBackend>;
  readonly tenantId?: string;
  readonly jobId?: string;
  /** Start from a checkpoint (any parallelism). */
  readonly restore?: CheckpointSnapshot;
}

/**
 * Runs a JobDefinition in this process with memory sources and sinks and a manual clock, in the spirit of Kafka
 * Streams' TopologyTestDriver: every call returns once the job has handled everything it was given.
 * Sources must be memorySource(); sinks memorySink() (Kafka ones would need a broker: use runJob for those).
 */
export class TestDriver {
  /** The job's in-memory inputs and outputs (memory-io.ts). */
  readonly io: JobMemoryIo;

  private constructor(
    readonly job: RunningJob,
    readonly clock: ManualClock,
  ) {
    this.io = memoryIoOf(job);
  }

  static async start(definition: JobDefinition, options: TestDriverOptions = {}): Promise<TestDriver> {
    const clock = new ManualClock(options.startTime ?? 0);
    const state = options.state ?? ((_ctx, c) => createStateBackend({ kind: 'memory', clock: () => c.now() }));
    const job = await runJob(definition, {
      tenantId: options.tenantId ?? 'test-tenant',
      jobId: options.jobId ?? 'test-job',
      parallelism: options.parallelism,
      state: (ctx) => state(ctx, clock),
      clock,
      restore: options.restore,
    });
    return new TestDriver(job, clock);
  }

  /** Feeds records (values, or { value, timestamp } with event time) to a memory source and waits until handled. */
  async push<T>(sourceId: string, records: readonly MemorySourceRecord<T>[], subtask = 0): Promise<void> {
    this.io.push(sourceId, records, subtask);
    await this.io.quiet();
  }

  async pushValues<T>(sourceId: string, values: readonly T[], subtask = 0): Promise<void> {
    await this.push(sourceId, values.map((value) => ({ value })), subtask);
  }

  async pushWatermark(sourceId: string, watermark: number, subtask = 0): Promise<void> {
    this.io.pushWatermark(sourceId, watermark, subtask);
    await this.io.quiet();
  }

  /** Moves processing time forward; due processing-time timers and TTL expiries take effect. */
  async advanceProcessingTime(ms: number): Promise<void> {
    this.clock.advance(ms);
    this.io.tick();
    await this.io.quiet();
  }

  output<T>(sinkId: string): T[] {
    return this.io.collected(sinkId).map((r) => r.value as T);
  }

  /** Value and timestamp of each output record (the runtime's own fields, such as ingestion time, left out). */
  outputRecords<T>(sinkId: string): CollectedRecord<T>[] {
    return this.io.collected(sinkId).map((r) => ({ value: r.value as T, timestamp: r.timestamp }));
  }

  deadLetters(): readonly DeadLetter[] {
    return this.io.deadLetters();
  }

  routingTable(operatorId: string): RoutingTable {
    return this.job.routingTable(operatorId);
  }

  moveKeyGroups(operatorId: string, moves: readonly KeyGroupMove[]): Promise<RoutingTable> {
    return this.job.moveKeyGroups(operatorId, moves);
  }

  splitKeys(operatorId: string, splits: readonly KeySplit[]): void {
    this.job.splitKeys(operatorId, splits);
  }

  snapshotKeyGroup(operatorId: string, keyGroup: number): Promise<Uint8Array> {
    return this.job.snapshotKeyGroup(operatorId, keyGroup);
  }

  async restoreKeyGroup(operatorId: string, keyGroup: number, image: Uint8Array): Promise<void> {
    await this.job.restoreKeyGroup(operatorId, keyGroup, image);
  }

  /** Takes an aligned checkpoint and waits until every subtask contributed its part. */
  async checkpoint(checkpointId: number): Promise<CheckpointSnapshot> {
    const snapshot = await this.job.triggerCheckpoint(checkpointId);
    await this.io.quiet();
    return snapshot;
  }

  /** Ends every memory source (watermark +∞ fires all event-time timers) and waits for the job to finish. */
  async end(...sourceIds: string[]): Promise<void> {
    for (const id of sourceIds) this.io.endSource(id);
    await this.job.done;
  }

  async close(): Promise<void> {
    await this.job.stop();
  }
}
