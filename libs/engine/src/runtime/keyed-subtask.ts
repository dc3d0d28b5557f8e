/**
 * A keyed subtask: the keyed operator at its root (operator-contract.ts) and the chain behind it. Its input channels
 * are the upstream stage's subtasks (and a broadcast input's): it aligns checkpoint barriers over them
 * (barrier-alignment.ts), min-combines their watermarks, fires processing-time timers as the clock passes them, and
 * merges queued data into batches of up to MAX_BATCH_RECORDS (one prefetch, one emit).
 */
import type { ChainNode } from './chain';
import { offsetBefore } from './operators/keyed-operator';
import type { KeyedStreamOperator } from './operators/operator-contract';
import type { ChainEnvLike } from './ports';
import type { InputQueue } from './queue';
import { type InputMessage, type KeyedRecord, MIN_WATERMARK, type StreamRecord } from './records';
import { BarrierAlignment, channelOf } from './barrier-alignment';
import { runSubtaskLoop, type Subtask, type SubtaskSnapshot } from './subtask';
import type { SubtaskOutputs } from './subtask-outputs';
import { InputWatermarks } from './watermarks';

/** Queued data messages are merged into batches of up to this many records (one prefetch, one emit). */
const MAX_BATCH_RECORDS = 4_096;

export interface KeyedSubtaskParts {
  readonly stageId: string;
  readonly env: ChainEnvLike;
  readonly queue: InputQueue;
  readonly operator: KeyedStreamOperator;
  /** The operators fed by the keyed operator's main output (its outputs reach them through its environment). */
  readonly head: readonly ChainNode[];
  readonly outputs: SubtaskOutputs;
  readonly dataChannels: number;
  readonly broadcastChannels: number;
  /** Called once per checkpoint when this subtask has its part of the consistent cut. */
  readonly onSnapshot: (checkpointId: number, snapshot: SubtaskSnapshot) => void;
  /** Subtasks reading the Kafka exchange: where their reader is (see SubtaskSnapshot.exchangePositions). */
  readonly exchangePositions?: () => Readonly<Record<string, string>>;
  /** A cap on the records per second this subtask processes (RunJobOptions.subtaskRecordsPerSecond). */
  readonly recordsPerSecond?: number;
}

export class KeyedSubtask implements Subtask {
  private stopped = false;
  private finished = false;
  private readonly watermarks: InputWatermarks;
  private readonly alignment = new BarrierAlignment();
  private readonly endedChannels = new Set<string>();
  private broadcastEnded = 0;
  private watermark = MIN_WATERMARK;
  /** Stop-with-savepoint requested: the next barrier this subtask completes starts holding its processing-time timers. */
  private holdTimersAtBarrier = false;
  /**
   * Past a stop-with-savepoint barrier: processing-time timers wait. The savepoint holds them as pending, so the
   * restored job fires them; firing them here too would repeat their output in at-least-once sinks.
   */
  private timersHeld = false;
  /** With a rate cap: when the records handled so far have used up their time (performance.now()). */
  private capacityUsedUntil = 0;

  constructor(private readonly parts: KeyedSubtaskParts) {
    this.watermarks = new InputWatermarks(parts.dataChannels);
  }

  get hasFinished(): boolean {
    return this.finished;
  }

  get currentWatermark(): number | null {
    return this.watermark === MIN_WATERMARK ? null : this.watermark;
  }

  async run(): Promise<void> {
    const { queue, env, operator } = this.parts;
    await operator.open();
    this.finished = await runSubtaskLoop(queue, env, () => this.stopped, {
      waitMs: () => this.waitMs(),
      turn: async (message, took) => {
        let finished = false;
        // No merging while a checkpoint aligns: a merged batch carries one channel, and alignment must hold back
        // exactly the records of channels whose barrier has arrived (mixing them lost or doubled records on restore).
        if (message?.kind === 'data' && message.records.length > 0 && !this.alignment.aligning) {
          const more = queue.takeQueuedData(MAX_BATCH_RECORDS - message.records.length);
          took(more.length);
          for (const m of more) if (m.kind === 'data' && m.channel >= 0) this.watermarks.onData(m.channel);
          const batch = (more.length === 0 ? message : merge(message, more)) as InputMessage & { kind: 'data' };
          finished = this.parts.recordsPerSecond ? await this.handleCapped(batch) : await this.handle(batch);
        } else if (message) {
          finished = await this.handle(message);
        }
        await this.fireProcessingTimers();
        return finished;
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.parts.queue.interrupt();
  }

  holdTimersAfterNextBarrier(): void {
    this.holdTimersAtBarrier = true;
  }

  releaseTimers(): void {
    this.holdTimersAtBarrier = false;
    this.timersHeld = false;
  }

  emitOutputs(): Promise<void> {
    return this.parts.outputs.emit();
  }

  /**
   * With a rate cap, a batch goes through in slices of a twentieth of a second's worth, each followed by its wait:
   * results flow at the capped rate instead of in bursts a whole batch apart. Positions go with the last slice.
   */
  private async handleCapped(batch: InputMessage & { kind: 'data' }): Promise<boolean> {
    const slice = Math.max(1, Math.floor(this.parts.recordsPerSecond! / 20));
    let finished = false;
    for (let i = 0; i < batch.records.length; i += slice) {
      const last = i + slice >= batch.records.length;
      const part = { kind: 'data' as const, channel: batch.channel, records: batch.records.slice(i, i + slice), ...(last && batch.positions ? { positions: batch.positions } : {}) };
      finished = (await this.handle(part)) || finished;
      await this.waitForCapacity(part.records.length);
    }
    return finished;
  }

  /** The rate cap: `records` more cost records / cap seconds; waits (busy, as the machine it stands for would be). */
  private async waitForCapacity(records: number): Promise<void> {
    const now = performance.now();
    this.capacityUsedUntil = Math.max(this.capacityUsedUntil, now) + (records / this.parts.recordsPerSecond!) * 1000;
    const wait = this.capacityUsedUntil - now;
    if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  private waitMs(): number {
    if (this.timersHeld) return 200;
    const next = this.parts.operator.nextProcessingTimer();
    if (next === undefined) return 200;
    return Math.max(1, Math.min(200, next - this.parts.env.clock.now()));
  }

  /** Returns true when the subtask has seen the end of all its inputs. */
  private async handle(message: InputMessage): Promise<boolean> {
    const { operator, outputs } = this.parts;
    // Aligned checkpoint: a channel past the barrier waits until every channel is.
    if (this.alignment.hold(message)) return false;
    switch (message.kind) {
      case 'barrier':
        return this.onBarrier(message);
      case 'data': {
        if (message.records.length > 0) {
          if (message.channel >= 0) this.watermarks.onData(message.channel);
          this.recordKeys(message.records as readonly KeyedRecord[]);
          await operator.processBatch(message.records as readonly KeyedRecord[], message.positions);
        }
        await outputs.emit();
        return false;
      }
      case 'broadcast':
        operator.processBroadcast(message.records);
        await outputs.emit();
        return false;
      case 'watermark':
        await this.advance(this.watermarks.onWatermark(message.channel, message.watermark));
        return false;
      case 'idle': {
        const next = this.watermarks.onIdle(message.channel);
        if (next !== null) await this.advance(next);
        if (this.watermarks.allIdle) await outputs.forEach((t) => t.onIdle());
        return false;
      }
      case 'end':
        return this.onEnd(message.channel, message.lane, message.senders);
      case 'tick':
        return false;
      case 'control':
        // Control reads and replaces backend state directly: it must see what the operator holds in memory.
        await operator.persistState();
        await message.run();
        await outputs.emit();
        return false;
    }
  }

  private async onBarrier(message: InputMessage & { kind: 'barrier' }): Promise<boolean> {
    const senders = message.lane === 'data' ? message.senders : undefined;
    // The upstream stage's size as of this checkpoint (a live rescale): more channels count from its first barrier
    // (fewer once the retired ones have ended: onEnd).
    if (senders !== undefined && senders > this.watermarks.channels) await this.resizeChannels(senders);
    if (message.lane === 'data' && message.channel >= this.watermarks.channels) await this.resizeChannels(message.channel + 1);
    this.alignment.arrive(message.checkpointId, channelOf(message)!);
    return this.completeIfAligned();
  }

  private async resizeChannels(channels: number): Promise<void> {
    for (let c = channels; c < this.watermarks.channels; c++) this.endedChannels.delete(`data:${c}`);
    await this.advance(this.watermarks.resize(channels));
  }

  private allChannels(): string[] {
    const out: string[] = [];
    for (let c = 0; c < this.watermarks.channels; c++) out.push(`data:${c}`);
    for (let c = 0; c < this.parts.broadcastChannels; c++) out.push(`broadcast:${c}`);
    return out;
  }

  /** When every channel has delivered the barrier (or ended): snapshot, forward the barrier, replay held messages. */
  private async completeIfAligned(): Promise<boolean> {
    if (!this.alignment.aligning) return false;
    const done = this.alignment.complete(this.allChannels(), this.endedChannels);
    if (!done) return false;
    const { operator, outputs } = this.parts;
    await outputs.emit();
    const keyGroups = await operator.snapshotOwnedKeyGroups();
    this.parts.onSnapshot(done.checkpointId, {
      stageId: this.parts.stageId,
      subtask: this.parts.env.subtask,
      keyGroups,
      operatorState: operator.snapshotOperatorState(),
      ...(this.parts.exchangePositions ? { exchangePositions: this.parts.exchangePositions() } : {}),
    });
    await outputs.forEach((t) => t.onBarrier(done.checkpointId));
    if (this.holdTimersAtBarrier) {
      this.holdTimersAtBarrier = false;
      this.timersHeld = true;
    }
    let finished = false;
    for (const held of done.held) finished = (await this.handle(held)) || finished;
    return finished;
  }

  private async onEnd(channel: number, lane: 'data' | 'broadcast', senders?: number): Promise<boolean> {
    this.endedChannels.add(`${lane}:${channel}`);
    if (this.alignment.aligning && (await this.completeIfAligned())) return true;
    if (senders !== undefined && lane === 'data') {
      // A subtask upstream retired in a live rescale: once every channel from `senders` on has ended, drop them.
      if (channel >= this.watermarks.channels) return false;
      const retired = Array.from({ length: this.watermarks.channels - senders }, (_, i) => `data:${senders + i}`);
      if (retired.length > 0 && retired.every((c) => this.endedChannels.has(c))) await this.resizeChannels(senders);
      else await this.advance(this.watermarks.onEnd(channel));
      return false;
    }
    if (lane === 'broadcast') {
      this.broadcastEnded++;
    } else {
      const next = this.watermarks.onEnd(channel);
      if (next !== null) await this.advance(next);
    }
    const done = this.watermarks.allEnded && this.broadcastEnded >= this.parts.broadcastChannels;
    if (done) await this.parts.outputs.forEach((t) => t.onEnd());
    return done;
  }

  private async advance(watermark: number | null): Promise<void> {
    if (watermark === null || watermark <= this.watermark) return;
    this.watermark = watermark;
    await this.parts.operator.advanceWatermark(watermark);
    await this.parts.outputs.emit();
    await this.parts.outputs.forEach((t) => t.onWatermark(watermark));
  }

  private async fireProcessingTimers(): Promise<void> {
    const operator = this.parts.operator;
    if (this.timersHeld) return;
    const now = this.parts.env.clock.now();
    const next = operator.nextProcessingTimer();
    if (next === undefined || next > now) return;
    await operator.advanceProcessingTime(now);
    await this.parts.outputs.emit();
  }

  private recordKeys(records: readonly KeyedRecord[]): void {
    const metrics = this.parts.env.metrics;
    metrics.onBatchIn(records.length);
    for (const r of records) metrics.offerKey(String(r.key), r.keyGroup);
  }
}

/** One data message out of several (the caller has already marked each one's channel active). */
function merge(first: InputMessage & { kind: 'data' }, more: InputMessage[]): InputMessage {
  const records: StreamRecord[] = [...first.records];
  let positions = first.positions;
  for (const m of more) {
    if (m.kind === 'data') for (const r of m.records) records.push(r);
    if (m.kind === 'data' && m.positions) positions = furthest(positions, m.positions);
  }
  return { kind: 'data', channel: first.channel, records, positions };
}

/** Per source partition the further of two positions (batches of a partition may arrive out of order across partitions). */
function furthest(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = { ...a };
  for (const at in b) if (out[at] === undefined || offsetBefore(out[at], b[at])) out[at] = b[at];
  return out;
}
