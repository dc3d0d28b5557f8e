/**
 * Live moves of a source's Kafka partitions between the processes of a run (a live rescale that changes the source's
 * parallelism), over its control channel. Process 0 leads a move between two checkpoints: it announces it; the
 * process whose subtask reads each partition stops reading it between two polls and, once everything it read from it
 * is in the exchange, says where it stopped; the process running the new owner reads on from there and says so.
 * Nothing but an offset and an event time travels: a source has no other state.
 */
import type { RunningJob } from '@weir/engine';
import { AwaitedAcks } from './awaited-acks';
import type { MovedPartition, RunControlChannel, RunControlDelivery, RunControlMessage } from './run-control';

export class PartitionMoveError extends Error {
  override readonly name = 'PartitionMoveError';
}

/** Every process's part: release what its subtasks read, adopt what its subtasks are given. */
export class PartitionMover {
  constructor(
    private readonly job: RunningJob,
    private readonly channel: RunControlChannel,
    /** Whether this process runs that subtask of that source. */
    private readonly runsHere: (sourceId: string, subtask: number) => boolean,
  ) {}

  onMessage(message: RunControlMessage): void {
    if (message.type === 'move-partitions') {
      for (const move of message.moves) if (this.runsHere(message.sourceId, move.fromSubtask)) void this.release(message.moveId, message.sourceId, move);
    } else if (message.type === 'partition-released' && this.runsHere(message.sourceId, message.toSubtask)) {
      void this.adopt(message);
    }
  }

  private async release(moveId: string, sourceId: string, move: MovedPartition): Promise<void> {
    const releasedAt = Date.now();
    try {
      const { offset, maxTimestamp } = await this.job.releaseSourcePartition(sourceId, move.partition);
      await this.channel.publish({ type: 'partition-released', moveId, sourceId, ...move, offset, maxTimestamp, releasedAt });
    } catch (err) {
      await this.fail(moveId, move.partition, `releasing it: ${(err as Error).message}`);
    }
  }

  private async adopt(message: Extract<RunControlMessage, { type: 'partition-released' }>): Promise<void> {
    const { moveId, sourceId, partition, fromSubtask, toSubtask } = message;
    try {
      await this.job.adoptSourcePartition(sourceId, partition, toSubtask, { offset: message.offset, maxTimestamp: message.maxTimestamp });
      const pauseMs = Math.max(0, Date.now() - message.releasedAt);
      await this.channel.publish({ type: 'partition-adopted', moveId, sourceId, partition, fromSubtask, toSubtask, pauseMs });
    } catch (err) {
      await this.fail(moveId, partition, `adopting it: ${(err as Error).message}`);
    }
  }

  private fail(moveId: string, partition: number, why: string): Promise<void> {
    return this.channel.publish({ type: 'partition-move-failed', moveId, partition, message: why }).catch(() => undefined);
  }
}

export interface PartitionMoveReport {
  readonly moveId: string;
  readonly sourceId: string;
  readonly moved: readonly (MovedPartition & { readonly pauseMs: number })[];
  readonly durationMs: number;
}

/** Process 0's part: announce a move and wait until every partition of it is read by its new owner (or one failed). */
export class PartitionMoveLeader {
  private readonly acks = new AwaitedAcks<PartitionMoveReport['moved'][number]>();

  constructor(private readonly channel: RunControlChannel) {}

  onDelivery({ message }: RunControlDelivery): void {
    if (message.type === 'partition-adopted') {
      const { partition, fromSubtask, toSubtask, pauseMs } = message;
      this.acks.ack(message.moveId, partition, { partition, fromSubtask, toSubtask, pauseMs });
    } else if (message.type === 'partition-move-failed') {
      this.acks.fail(message.moveId, new PartitionMoveError(`partition ${message.partition} did not move: ${message.message}`));
    }
  }

  /** Runs the move (the caller orders it between checkpoints). */
  async lead(moveId: string, sourceId: string, moves: readonly MovedPartition[], timeoutMs: number): Promise<PartitionMoveReport> {
    const startedAt = Date.now();
    const moved = await this.acks.await(
      moveId,
      moves.map((m) => m.partition),
      timeoutMs,
      () => this.channel.publish({ type: 'move-partitions', moveId, sourceId, moves: [...moves] }),
      (left) => new PartitionMoveError(`moving partitions of "${sourceId}" (${moveId}) not done within ${timeoutMs / 1000} s: ${left} still moving`),
    );
    return { moveId, sourceId, moved, durationMs: Date.now() - startedAt };
  }
}
