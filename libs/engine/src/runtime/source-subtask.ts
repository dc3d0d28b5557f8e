/**
 * A source subtask: its source (a pump, or the test driver's memory input) offers batches, watermarks and barriers
 * to its queue, and this loop hands them to the chain behind the source. It has one input, so it is aligned at each
 * barrier: its part of the cut is where its source stood when it offered the barrier.
 */
import type { ChainNode } from './chain';
import type { ChainEnvLike } from './ports';
import type { InputQueue } from './queue';
import { type InputMessage, MAX_WATERMARK, MIN_WATERMARK } from './records';
import { runSubtaskLoop, type Subtask, type SubtaskSnapshot } from './subtask';
import type { SubtaskOutputs } from './subtask-outputs';

export interface SourceSubtaskParts {
  readonly stageId: string;
  readonly env: ChainEnvLike;
  readonly queue: InputQueue;
  /** The operators the source feeds. */
  readonly head: readonly ChainNode[];
  readonly outputs: SubtaskOutputs;
  /** Called once per checkpoint with this subtask's part of the cut. */
  readonly onSnapshot: (checkpointId: number, snapshot: SubtaskSnapshot) => void;
}

export class SourceSubtask implements Subtask {
  private stopped = false;
  private finished = false;
  private watermark = MIN_WATERMARK;

  constructor(private readonly parts: SourceSubtaskParts) {}

  get hasFinished(): boolean {
    return this.finished;
  }

  get currentWatermark(): number | null {
    return this.watermark === MIN_WATERMARK ? null : this.watermark;
  }

  async run(): Promise<void> {
    this.finished = await runSubtaskLoop(this.parts.queue, this.parts.env, () => this.stopped, {
      waitMs: () => 200,
      turn: (message) => (message ? this.handle(message) : Promise.resolve(false)),
    });
  }

  stop(): void {
    this.stopped = true;
    this.parts.queue.interrupt();
  }

  /** A source subtask runs no timers: nothing to hold for a stop-with-savepoint (its source pauses instead). */
  holdTimersAfterNextBarrier(): void {}

  releaseTimers(): void {}

  emitOutputs(): Promise<void> {
    return this.parts.outputs.emit();
  }

  /** Returns true once the source has ended. */
  private async handle(message: InputMessage): Promise<boolean> {
    const { head, outputs } = this.parts;
    switch (message.kind) {
      case 'data':
        if (message.records.length > 0) for (const n of head) n.push(message.records);
        await outputs.emit(message.positions);
        return false;
      case 'barrier':
        await outputs.emit();
        this.parts.onSnapshot(message.checkpointId, { stageId: this.parts.stageId, subtask: this.parts.env.subtask, sourcePositions: message.sourcePositions ?? {} });
        await outputs.forEach((t) => t.onBarrier(message.checkpointId));
        return false;
      case 'watermark':
        await this.advance(message.watermark);
        return false;
      case 'idle':
        await outputs.forEach((t) => t.onIdle());
        return false;
      case 'end':
        await this.advance(MAX_WATERMARK);
        await outputs.forEach((t) => t.onEnd());
        return true;
      case 'control':
        await message.run();
        await outputs.emit();
        return false;
      default:
        return false;
    }
  }

  private async advance(watermark: number): Promise<void> {
    if (watermark <= this.watermark) return;
    this.watermark = watermark;
    await this.parts.outputs.emit();
    await this.parts.outputs.forEach((t) => t.onWatermark(watermark));
  }
}
