import type { SubtaskMetricsRecorder } from './ports';
import type { ChainNode, ChainTerminal } from './chain';
import type { ChainEnvLike } from './ports';
import type { KeyedOperator } from './operators/keyed-operator';
import type { BroadcastProcessOperator } from './operators/process-operator';
import type { InputQueue } from './queue';
import { type InputMessage, type KeyedRecord, MAX_WATERMARK, MIN_WATERMARK, type StreamRecord } from './records';
import { InputWatermarks } from './watermarks';

/** Queued data messages are merged into batches of up to this many records (one prefetch, one emit). */
const MAX_BATCH_RECORDS = 4_096;

/** One data message out of several (the caller has already marked each one's channel active). */
function merge(first: InputMessage & { kind: 'data' }, more: InputMessage[]): InputMessage {
  const records: StreamRecord[] = [...first.records];
  for (const m of more) {
    if (m.kind === 'data') for (const r of m.records) records.push(r);
  }
  return { kind: 'data', channel: first.channel, records };
}

export interface SubtaskParts {
  readonly env: ChainEnvLike & { readonly metrics: SubtaskMetricsRecorder };
  readonly queue: InputQueue;
  /** The operators fed by the stage's root (the source, or the keyed operator's main output). */
  readonly head: readonly ChainNode[];
  readonly terminals: readonly ChainTerminal[];
  /** Keyed stages only. */
  readonly operator?: KeyedOperator;
  readonly dataChannels: number;
  readonly broadcastChannels: number;
}

/**
 * One subtask's loop: take a message, run it through the stage's operators, flush every terminal once, repeat.
 * Watermarks are min-combined across data channels; processing-time timers fire when the clock passes them.
 */
export class Subtask {
  private stopped = false;
  private readonly watermarks: InputWatermarks;
  private broadcastEnded = 0;
  private watermark = MIN_WATERMARK;

  constructor(private readonly parts: SubtaskParts) {
    this.watermarks = new InputWatermarks(parts.dataChannels);
  }

  get currentWatermark(): number | null {
    return this.watermark === MIN_WATERMARK ? null : this.watermark;
  }

  async run(): Promise<void> {
    const { queue, env, operator } = this.parts;
    await operator?.open();
    for (;;) {
      env.metrics.enter('idle', env.clock.now());
      const message = await queue.take(this.waitMs());
      env.metrics.enter('busy', env.clock.now());
      if (this.stopped) {
        if (message) queue.handled();
        return;
      }
      let finished = false;
      let handledCount = message ? 1 : 0;
      try {
        if (message?.kind === 'data' && operator && message.records.length > 0) {
          const more = queue.takeQueuedData(MAX_BATCH_RECORDS - message.records.length);
          handledCount += more.length;
          for (const m of more) if (m.kind === 'data' && m.channel >= 0) this.watermarks.onData(m.channel);
          finished = await this.handle(more.length === 0 ? message : merge(message, more));
        } else if (message) {
          finished = await this.handle(message);
        }
        await this.fireProcessingTimers();
      } finally {
        // Handled only once its timers ran too, so the test driver's quiet() sees their outputs.
        for (let i = 0; i < handledCount; i++) queue.handled();
      }
      if (finished) return;
    }
  }

  stop(): void {
    this.stopped = true;
    this.parts.queue.interrupt();
  }

  private waitMs(): number {
    const next = this.parts.operator?.nextProcessingTimer();
    if (next === undefined) return 200;
    return Math.max(1, Math.min(200, next - this.parts.env.clock.now()));
  }

  /** Returns true when the subtask has seen the end of all its inputs. */
  private async handle(message: InputMessage): Promise<boolean> {
    const { operator, head } = this.parts;
    switch (message.kind) {
      case 'data': {
        if (message.records.length === 0) {
          await this.flush();
          return false;
        }
        if (operator) {
          if (message.channel >= 0) this.watermarks.onData(message.channel);
          this.recordKeys(message.records as readonly KeyedRecord[]);
          await operator.processBatch(message.records as readonly KeyedRecord[]);
        } else {
          for (const n of head) n.push(message.records);
        }
        await this.flush();
        return false;
      }
      case 'broadcast':
        (operator as BroadcastProcessOperator).processBroadcast(message.records);
        await this.flush();
        return false;
      case 'watermark':
        await this.advance(operator ? this.watermarks.onWatermark(message.channel, message.watermark) : message.watermark);
        return false;
      case 'idle': {
        if (!operator) {
          await this.forEachTerminal((t) => t.onIdle());
          return false;
        }
        const next = this.watermarks.onIdle(message.channel);
        if (next !== null) await this.advance(next);
        return false;
      }
      case 'end':
        return this.onEnd(message.channel, message.lane);
      case 'tick':
        return false;
      case 'control':
        await message.run();
        await this.flush();
        return false;
    }
  }

  private async onEnd(channel: number, lane: 'data' | 'broadcast'): Promise<boolean> {
    if (!this.parts.operator) {
      await this.advance(MAX_WATERMARK);
    } else if (lane === 'broadcast') {
      this.broadcastEnded++;
    } else {
      const next = this.watermarks.onEnd(channel);
      if (next !== null) await this.advance(next);
    }
    const done = this.parts.operator
      ? this.watermarks.allEnded && this.broadcastEnded >= this.parts.broadcastChannels
      : true;
    if (done) await this.forEachTerminal((t) => t.onEnd());
    return done;
  }

  private async advance(watermark: number | null): Promise<void> {
    if (watermark === null || watermark <= this.watermark) return;
    this.watermark = watermark;
    if (this.parts.operator) await this.parts.operator.advanceWatermark(watermark);
    await this.flush();
    await this.forEachTerminal((t) => t.onWatermark(watermark));
  }

  private async fireProcessingTimers(): Promise<void> {
    const operator = this.parts.operator;
    if (!operator) return;
    const now = this.parts.env.clock.now();
    const next = operator.nextProcessingTimer();
    if (next === undefined || next > now) return;
    await operator.advanceProcessingTime(now);
    await this.flush();
  }

  private recordKeys(records: readonly KeyedRecord[]): void {
    const metrics = this.parts.env.metrics;
    metrics.onBatchIn(records.length);
    for (const r of records) metrics.offerKey(String(r.key), r.keyGroup);
  }

  private async flush(): Promise<void> {
    const { env } = this.parts;
    env.metrics.enter('backpressured', env.clock.now());
    await env.deadLetters.flush();
    await this.forEachTerminal((t) => t.flush());
    env.metrics.enter('busy', env.clock.now());
  }

  private async forEachTerminal(fn: (t: ChainTerminal) => Promise<void>): Promise<void> {
    const terminals = this.parts.terminals;
    if (terminals.length === 1) await fn(terminals[0]);
    else if (terminals.length > 1) await Promise.all(terminals.map(fn));
  }
}
