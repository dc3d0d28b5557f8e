/**
 * Control of a running job, apart from its data path: checkpoints (trigger, complete, the stop-with-savepoint pause),
 * live key-group and source-partition moves, live resizes and key-group snapshots. Every step that touches a
 * subtask's state runs in-band, in that subtask's input, so it sees exactly the records before it.
 */
import { type KeySplit, KeySplits, type RoutingTable } from '../keygroups';
import type { CheckpointCoordinator } from './checkpoint-coordinator';
import type { ExactlyOnceKafkaSinkWriter } from './connectors/exactly-once-sink';
import type { KeyGroupMove } from './exchange/exchange';
import { inBand } from './in-band';
import { adoptFromProcess, KafkaKeyGroupMoves, type KeyGroupHandover, moveInMemory, releaseToProcess, routedTo } from './key-group-moves';
import { isSplittable, type JobPlan, sourceRescalesLive } from './plan';
import { type CheckpointSnapshot, JobRunError } from './running-job';
import { adoptSourcePartition, releaseSourcePartition, resizeSource } from './source-partition-moves';
import type { PartitionHandover } from './connectors/sources';
import { present, type StageRuntime } from './stage-runtime';

export class JobControl {
  private readonly kafkaMoves = new KafkaKeyGroupMoves();

  constructor(
    private readonly jobId: string,
    private readonly plan: JobPlan,
    private readonly stages: ReadonlyMap<string, StageRuntime>,
    private readonly checkpoints: CheckpointCoordinator,
    private readonly epochWriters: readonly ExactlyOnceKafkaSinkWriter[],
  ) {}

  /**
   * Barriers enter at this process's sources; keyed subtasks here align over every input channel, local or (over the
   * Kafka exchange) remote. Resolves with this process's part of the cut and its exactly-once sinks' sealed epochs.
   */
  async triggerCheckpoint(checkpointId: number): Promise<CheckpointSnapshot> {
    const snapshot = await this.checkpoints.trigger(checkpointId, [...this.stages.values()]);
    return { ...snapshot, sinkEpochs: await Promise.all(this.epochWriters.map((w) => w.sealedEpoch(checkpointId))) };
  }

  async completeCheckpoint(checkpointId: number): Promise<void> {
    await Promise.all(this.epochWriters.map((w) => w.commit(checkpointId)));
  }

  pauseSourcesAfterNextBarrier(): void {
    for (const p of this.sourcePumps()) p.pauseAfterNextBarrier?.();
    for (const rt of this.stages.values()) for (const i of rt.local) rt.subtasks[i].holdTimersAfterNextBarrier();
  }

  resumeSources(): void {
    for (const p of this.sourcePumps()) p.resume?.();
    for (const rt of this.stages.values()) {
      for (const i of rt.local) {
        rt.subtasks[i].releaseTimers();
        // Wakes the subtask so timers that fell due while held fire now, not at its next message.
        rt.queues[i].offer({ kind: 'tick' });
      }
    }
  }

  routingTable(operatorId: string): RoutingTable {
    const rt = this.keyedStage(operatorId);
    return rt.exchange?.table ?? rt.routing!;
  }

  moveKeyGroups(operatorId: string, moves: readonly KeyGroupMove[]): Promise<RoutingTable> {
    const rt = this.keyedStage(operatorId);
    return rt.exchange ? moveInMemory(rt, moves) : this.kafkaMoves.move(rt, moves);
  }

  /** The old owner's half of a live move to another process (key-group-moves.ts); never while a cut is collected. */
  releaseKeyGroup(operatorId: string, keyGroup: number, toSubtask: number): Promise<KeyGroupHandover> {
    const rt = this.kafkaStage(operatorId);
    return this.betweenCheckpoints(() => releaseToProcess(rt, keyGroup, toSubtask));
  }

  /** The new owner's half: restore the handed-over state, read the partition on from its offset. */
  adoptKeyGroup(operatorId: string, keyGroup: number, toSubtask: number, handover: KeyGroupHandover): Promise<void> {
    const rt = this.kafkaStage(operatorId);
    return this.betweenCheckpoints(() => adoptFromProcess(rt, keyGroup, toSubtask, handover));
  }

  routeKeyGroup(operatorId: string, keyGroup: number, toSubtask: number): void {
    const rt = this.kafkaStage(operatorId);
    // The owner's process has it already: its own half set it, and a state change here would be a bug.
    if (rt.routing!.ownerOf(keyGroup) === toSubtask) return;
    rt.routing = routedTo(rt.routing!, keyGroup, toSubtask);
  }

  /**
   * Splits hot keys of a splittable window over the key groups given, from this process's next record on; a key
   * left out of `splits` goes whole to its own key group again (a fold-back). Any moment is safe: a split changes
   * where records land, never a result (keygroups/key-splits.ts). Throws KeySplitError for a bad split.
   */
  splitKeys(operatorId: string, splits: readonly KeySplit[]): void {
    const rt = this.keyedStage(operatorId);
    if (!isSplittable(rt.plan)) {
      throw new JobRunError(`"${operatorId}" is not a splittable window: only a window declared with { splittable: true } merges a split key's partials`);
    }
    rt.splits = KeySplits.of(splits, rt.routing!.maxParallelism);
  }

  keySplits(operatorId: string): readonly KeySplit[] {
    return this.keyedStage(operatorId).splits.splits;
  }

  /** A source's partition moves to another subtask (a live rescale of the source), between checkpoints. */
  releaseSourcePartition(sourceId: string, partition: number): Promise<PartitionHandover> {
    const rt = this.sourceStage(sourceId);
    return this.betweenCheckpoints(() => releaseSourcePartition(rt, partition));
  }

  adoptSourcePartition(sourceId: string, partition: number, toSubtask: number, handover: PartitionHandover): Promise<void> {
    const rt = this.sourceStage(sourceId);
    return this.betweenCheckpoints(() => adoptSourcePartition(rt, partition, toSubtask, handover));
  }

  /** Resolves once the ends of this process's retired subtasks are handed to their writers. */
  resizeStage(stageId: string, parallelism: number): Promise<void> {
    const source = this.stages.get(stageId);
    if (source?.plan.root.kind === 'source') return resizeSource(this.sourceStage(stageId), parallelism);
    const rt = this.kafkaStage(stageId);
    if (rt.routing!.parallelism !== parallelism) rt.routing = rt.routing!.withParallelism(parallelism);
    // The stages it feeds learn it from this process's next barriers; user code from its OperatorInfo.
    for (const { sender } of rt.keyedSenders) sender.senders = parallelism;
    for (const i of rt.local) rt.operators[i]?.resize(parallelism);
    // Subtasks here that the rescale retired end their keyed output channels (after everything they emitted), so
    // the stages they fed stop counting them: for event time and for barriers alike.
    const ends = rt.keyedSenders.filter(({ subtask }) => subtask >= parallelism).map(({ subtask, sender }) => inBand(rt.queues[subtask], () => sender.sendEnd(subtask, parallelism)));
    return Promise.all(ends).then(() => undefined);
  }

  private betweenCheckpoints<T>(step: () => Promise<T>): Promise<T> {
    if (this.checkpoints.collecting) {
      return Promise.reject(new JobRunError('a checkpoint is being taken here: a key group moves between checkpoints, never during one'));
    }
    return step();
  }

  private sourceStage(sourceId: string): StageRuntime {
    const rt = this.stages.get(sourceId);
    if (!rt || rt.plan.root.kind !== 'source') throw new JobRunError(`no source "${sourceId}" in job ${this.jobId}`);
    if (!sourceRescalesLive(this.plan, rt.plan)) {
      throw new JobRunError(`source "${sourceId}" does not rescale live (a Kafka source whose every output goes through a keyBy does)`);
    }
    return rt;
  }

  private kafkaStage(operatorId: string): StageRuntime {
    const rt = this.keyedStage(operatorId);
    if (!rt.topic) throw new JobRunError(`"${operatorId}" runs in one process (memory exchange): move its key groups with moveKeyGroups`);
    return rt;
  }

  snapshotKeyGroup(operatorId: string, keyGroup: number): Promise<Uint8Array> {
    const rt = this.keyedStage(operatorId);
    const owner = this.localOwner(rt, keyGroup);
    return inBand(rt.queues[owner], async () => {
      await rt.backends[owner].flush();
      return rt.backends[owner].snapshotKeyGroup(keyGroup);
    });
  }

  restoreKeyGroup(operatorId: string, keyGroup: number, image: Uint8Array): Promise<void> {
    const rt = this.keyedStage(operatorId);
    const owner = this.localOwner(rt, keyGroup);
    return inBand(rt.queues[owner], () => rt.operators[owner].adoptKeyGroup(keyGroup, image));
  }

  private sourcePumps() {
    return [...this.stages.values()].filter((rt) => rt.plan.root.kind === 'source').flatMap((rt) => present(rt.pumps));
  }

  private localOwner(rt: StageRuntime, keyGroup: number): number {
    const owner = this.routingTable(rt.plan.id).ownerOf(keyGroup);
    if (!rt.operators[owner]) throw new JobRunError(`key group ${keyGroup} of "${rt.plan.id}" belongs to subtask ${owner}, not run here`);
    return owner;
  }

  private keyedStage(operatorId: string): StageRuntime {
    const rt = this.stages.get(operatorId);
    if (!rt || !rt.routing) throw new JobRunError(`no keyed operator "${operatorId}" in job ${this.jobId}`);
    return rt;
  }
}
