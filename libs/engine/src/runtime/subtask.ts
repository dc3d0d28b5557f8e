/**
 * A subtask: one instance of a stage, running in its own loop over its input queue (take a message, run it through
 * the stage's operators, emit the outputs once, repeat). Source subtasks (source-subtask.ts) hand their source's
 * batches to the chain behind it; keyed subtasks (keyed-subtask.ts) align barriers over their input channels, combine
 * watermarks, fire timers and run the keyed operator at their root. Both share this loop and their outputs
 * (subtask-outputs.ts).
 */
import type { ChainEnvLike } from './ports';
import type { InputQueue } from './queue';
import type { InputMessage } from './records';

/** What the runtime asks of every subtask, source or keyed. */
export interface Subtask {
  /** Resolves once the subtask has seen the end of all its inputs, or was stopped. */
  run(): Promise<void>;
  stop(): void;
  /** Null before the first watermark. */
  readonly currentWatermark: number | null;
  /** True once the subtask has seen the end of all its inputs (it takes no further checkpoints). */
  readonly hasFinished: boolean;
  /** Stop-with-savepoint: processing-time timers wait once the next barrier is complete (keyed subtasks). */
  holdTimersAfterNextBarrier(): void;
  /** The savepoint failed and the job keeps running: held timers fire again. */
  releaseTimers(): void;
  /** Hands what the chain holds to its terminals and waits for them (a long firing calls it between chunks). */
  emitOutputs(): Promise<void>;
}

/** What one subtask contributes to a checkpoint. */
export interface SubtaskSnapshot {
  readonly stageId: string;
  readonly subtask: number;
  /** Sources: per partition, the next offset to read after the barrier. */
  readonly sourcePositions?: Readonly<Record<string, string>>;
  /** Keyed operators: one self-contained image per owned key group (timers included). */
  readonly keyGroups?: ReadonlyMap<number, Uint8Array>;
  /** Keyed operators: state outside keyed state (broadcast state). */
  readonly operatorState?: unknown;
  /** Keyed operators behind the Kafka exchange: per owned key group, the partition offset a restore starts from. */
  readonly exchangePositions?: Readonly<Record<string, string>>;
}

/** One turn of a subtask's loop. */
export interface LoopTurn {
  /** How long the loop may wait for a message (a processing-time timer may be due sooner). */
  waitMs(): number;
  /**
   * Handles `message` (undefined: the wait ran out), calling `took` for messages it took from the queue with it (merged
   * into one batch); resolves true once the subtask has seen the end of all its inputs.
   */
  turn(message: InputMessage | undefined, took: (count: number) => void): Promise<boolean>;
}

/**
 * The loop both kinds of subtask run: wait, handle, count as handled (after its timers: the test driver's quiet()).
 * Resolves true once the subtask has seen the end of all its inputs, false once stopped.
 */
export async function runSubtaskLoop(queue: InputQueue, env: ChainEnvLike, stopped: () => boolean, loop: LoopTurn): Promise<boolean> {
  for (;;) {
    env.metrics.enter('idle', env.clock.now());
    const message = await queue.take(loop.waitMs());
    env.metrics.enter('busy', env.clock.now());
    if (stopped()) {
      if (message) queue.handled();
      return false;
    }
    let handled = message ? 1 : 0;
    let finished = false;
    try {
      finished = await loop.turn(message, (count) => (handled += count));
    } finally {
      for (let i = 0; i < handled; i++) queue.handled();
    }
    if (finished) return true;
  }
}
