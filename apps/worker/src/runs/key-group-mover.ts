/**
 * Live key-group moves between the processes of a run, over its control channel. Process 0 leads a move (between
 * two checkpoints, in the checkpoint leader's order): it announces it; the process running each key group's old
 * owner releases it (the engine hands over the state and the exchange offset) and ships the image, inline when small,
 * else through S3; the process running the new owner adopts it and says so. Only the moving key group's input waits
 * meanwhile, in its exchange partition; every other key group keeps running.
 */
import type { BlobStore } from '@weir/blob';
import type { RunningJob } from '@weir/engine';
import type { MoveReport } from '@weir/protocol';
import { AwaitedAcks } from './awaited-acks';
import type { RunControlChannel, RunControlDelivery, RunControlMessage } from './run-control';

/** Images up to this size travel in the control message itself; larger ones through S3. */
const INLINE_IMAGE_BYTES = 256 * 1024;

export interface KeyGroupMove {
  readonly keyGroup: number;
  readonly fromSubtask: number;
  readonly toSubtask: number;
}

export class MoveError extends Error {
  override readonly name = 'MoveError';
}

/** Every process's part: release what its subtasks own, adopt what its subtasks are given. */
export class KeyGroupMover {
  constructor(
    private readonly job: RunningJob,
    private readonly blob: BlobStore,
    private readonly scope: { readonly tenantId: string; readonly jobId: string },
    private readonly channel: RunControlChannel,
    /** Whether this process runs that subtask of that operator. */
    private readonly runsHere: (operatorId: string, subtask: number) => boolean,
  ) {}

  onMessage(message: RunControlMessage): void {
    if (message.type === 'move') void this.release(message).catch(() => undefined);
    else if (message.type === 'released') void this.adopt(message).catch(() => undefined);
    // Processes that took no part learn the new owner too (process 0 plans later moves from its table).
    else if (message.type === 'adopted') {
      try {
        this.job.routeKeyGroup(message.operatorId, message.keyGroup, message.toSubtask);
      } catch (err) {
        process.stderr.write(`job host ${process.pid}: could not note key group ${message.keyGroup}'s new owner: ${(err as Error).message}\n`);
      }
    }
  }

  private async release(message: Extract<RunControlMessage, { type: 'move' }>): Promise<void> {
    // All of this process's key groups of the move at once: the reader drops their partitions between the same two
    // polls and the subtask hands them over back to back, so a step of several costs about one hand-over's pause.
    const mine = message.moves.filter((move) => this.runsHere(message.operatorId, move.fromSubtask));
    await Promise.all(mine.map((move) => this.releaseOne(message, move)));
  }

  private async releaseOne(message: Extract<RunControlMessage, { type: 'move' }>, move: KeyGroupMove): Promise<void> {
    const releasedAt = Date.now();
    try {
      const { image, offset, standing } = await this.job.releaseKeyGroup(message.operatorId, move.keyGroup, move.toSubtask);
      const bytes = image.byteLength;
      let imageRef: { readonly inline: string } | { readonly key: string };
      if (bytes <= INLINE_IMAGE_BYTES) {
        imageRef = { inline: Buffer.from(image.buffer, image.byteOffset, bytes).toString('base64') };
      } else {
        const key = this.imageKey(message.moveId, message.operatorId, move.keyGroup);
        await this.blob.put(key, image, { contentType: 'application/octet-stream' });
        imageRef = { key };
      }
      await this.channel.publish({
        type: 'released',
        moveId: message.moveId,
        operatorId: message.operatorId,
        ...move,
        offset,
        bytes,
        releasedAt,
        image: imageRef,
        standing: Buffer.from(standing.buffer, standing.byteOffset, standing.byteLength).toString('base64'),
      });
    } catch (err) {
      await this.fail(message.moveId, move.keyGroup, `releasing it: ${(err as Error).message}`);
    }
  }

  private async adopt(message: Extract<RunControlMessage, { type: 'released' }>): Promise<void> {
    if (!this.runsHere(message.operatorId, message.toSubtask)) return;
    try {
      const image = 'inline' in message.image ? Buffer.from(message.image.inline, 'base64') : await this.download(message.image.key);
      const standing = Buffer.from(message.standing, 'base64');
      await this.job.adoptKeyGroup(message.operatorId, message.keyGroup, message.toSubtask, { image, offset: message.offset, standing });
      const pauseMs = Math.max(0, Date.now() - message.releasedAt);
      await this.channel.publish({
        type: 'adopted',
        moveId: message.moveId,
        operatorId: message.operatorId,
        keyGroup: message.keyGroup,
        fromSubtask: message.fromSubtask,
        toSubtask: message.toSubtask,
        bytes: message.bytes,
        pauseMs,
      });
      if ('key' in message.image) await this.blob.delete(message.image.key).catch(() => undefined);
    } catch (err) {
      await this.fail(message.moveId, message.keyGroup, `adopting it: ${(err as Error).message}`);
    }
  }

  private fail(moveId: string, keyGroup: number, why: string): Promise<void> {
    return this.channel.publish({ type: 'move-failed', moveId, keyGroup, message: why }).catch(() => undefined);
  }

  private imageKey(moveId: string, operatorId: string, keyGroup: number): string {
    return `tenants/${this.scope.tenantId}/jobs/${this.scope.jobId}/moves/${moveId}/${operatorId}-${keyGroup}`;
  }

  private async download(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.blob.get(key)) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
}

/** Process 0's part: announce a move and wait until every key group of it is adopted (or one failed). */
export class MoveLeader {
  private readonly acks = new AwaitedAcks<MoveReport['moved'][number]>();

  constructor(private readonly channel: RunControlChannel) {}

  onDelivery({ message }: RunControlDelivery): void {
    if (message.type === 'adopted') {
      const { keyGroup, fromSubtask, toSubtask, bytes, pauseMs } = message;
      this.acks.ack(message.moveId, keyGroup, { keyGroup, fromSubtask, toSubtask, bytes, pauseMs });
    } else if (message.type === 'move-failed') {
      this.acks.fail(message.moveId, new MoveError(`key group ${message.keyGroup} did not move: ${message.message}`));
    }
  }

  /** Runs the move (the caller orders it between checkpoints); the report names every key group moved. */
  async lead(moveId: string, operatorId: string, moves: readonly KeyGroupMove[], timeoutMs: number): Promise<MoveReport> {
    const startedAt = Date.now();
    const moved = await this.acks.await(
      moveId,
      moves.map((m) => m.keyGroup),
      timeoutMs,
      () => this.channel.publish({ type: 'move', moveId, operatorId, moves: [...moves] }),
      (left) => new MoveError(`move ${moveId} not done within ${timeoutMs / 1000} s: ${left} key groups still moving`),
    );
    return { moveId, operatorId, moved, durationMs: Date.now() - startedAt };
  }
}
