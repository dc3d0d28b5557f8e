import type { ChainNode, ChainTerminal } from './chain';
import type { ChainEnvLike } from './ports';
import { offsetBefore } from './operators/keyed-operator';
import type { KeyedStreamOperator } from './operators/operator-contract';
import type { BroadcastProcessOperator } from './operators/process-operator';
import type { InputQueue } from './queue';
import { type InputMessage, type KeyedRecord, MAX_WATERMARK, MIN_WATERMARK, type StreamRecord } from './records';
import { InputWatermarks } from './watermarks';

/** Queued data messages are merged into batches of up to this many records (one prefetch, one emit). */
const MAX_BATCH_RECORDS = 4_096;

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

export interface SubtaskParts {
  readonly stageId: string;
  readonly env: ChainEnvLike;
  readonly queue: InputQueue;
  /** The operators fed by the stage's root (the source, or the keyed operator's main output). */
  readonly head: readonly ChainNode[];
  readonly terminals: readonly ChainTerminal[];
  /** Keyed stages only. */
  readonly operator?: KeyedStreamOperator;
  readonly dataChannels: number;
  readonly broadcastChannels: number;
  /** Called once per checkpoint when this subtask has its part of the consistent cut. */
  readonly onSnapshot: (checkpointId: number, snapshot: SubtaskSnapshot) => void;
  /** Keyed subtasks reading the Kafka exchange: where their reader is (see SubtaskSnapshot.exchangePositions). */
  readonly exchangePositions?: () => Readonly<Record<string, string>>;
  /** A cap on the records per second this subtask processes (RunJobOptions.subtaskRecordsPerSecond). */
  readonly recordsPerSecond?: number;
}

interface Alignment {
  readonly checkpointId: number;
  /** Channels (`lane:channel`) whose barrier arrived; their later messages wait in `buffered`. */
  readonly seen: Set<string>;
  readonly buffered: InputMessage[];
}

function channelOf(message: InputMessage): string | null {
  switch (message.kind) {
    case 'data':
      return message.channel >= 0 ? `data:${message.channel}` : null;
    case 'watermark':
    case 'idle':
      return `data:${message.channel}`;
    case 'broadcast':
      return `broadcast:${message.channel}`;
    case 'end':
    case 'barrier':
      return `${message.lane}:${message.channel}`;
    default:
      return null;
  }
}

/**
 * One subtask's loop: take a message, run it through the stage's operators, emit every terminal's outputs once, repeat.
 * Watermarks are min-combined across data channels; processing-time timers fire when the clock passes them.
 */
export class Subtask {
  private stopped = false;
  private readonly watermarks: InputWatermarks;
  private broadcastEnded = 0;
  private watermark = MIN_WATERMARK;
  private aligning: Alignment | null = null;
  private readonly endedChannels = new Set<string>();
  private finished = false;
  /** Stop-with-savepoint requested: the next barrier this subtask completes starts holding its processing-time timers. */
  private holdTimersAtBarrier = false;
  /** With a rate cap: when the records handled so far have used up their time (performance.now()). */
  private capacityUsedUntil = 0;
  /**
   * Past a stop-with-savepoint barrier: processing-time timers wait. The savepoint holds them as pending, so the
   * restored job fires them; firing them here too would repeat their output in at-least-once sinks.
   */
  private timersHeld = false;

  constructor(private readonly parts: SubtaskParts) {
    this.watermarks = new InputWatermarks(parts.dataChannels);
  }

  /** True once the subtask has seen the end of all its inputs (it takes no further checkpoints). */
  get hasFinished(): boolean {
    return this.finished;
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
        // No merging while a checkpoint aligns: a merged batch carries one channel, and alignment must hold back
        // exactly the records of channels whose barrier has arrived (mixing them lost or doubled records on restore).
        if (message?.kind === 'data' && operator && message.records.length > 0 && !this.aligning) {
          const more = queue.takeQueuedData(MAX_BATCH_RECORDS - message.records.length);
          handledCount += more.length;
          for (const m of more) if (m.kind === 'data' && m.channel >= 0) this.watermarks.onData(m.channel);
          const batch = more.length === 0 ? message : merge(message, more);
          finished = this.parts.recordsPerSecond ? await this.handleCapped(batch as InputMessage & { kind: 'data' }) : await this.handle(batch);
        } else if (message) {
          finished = await this.handle(message);
        }
        await this.fireProcessingTimers();
      } finally {
        // Handled only once its timers ran too, so the test driver's quiet() sees their outputs.
        for (let i = 0; i < handledCount; i++) queue.handled();
      }
      if (finished) {
        this.finished = true;
        return;
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.parts.queue.interrupt();
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

  /**
   * Stop-with-savepoint: once this subtask has completed its next barrier (the savepoint's, or an earlier
   * checkpoint's still on its way, as the sources pause at), its processing-time timers wait for releaseTimers().
   */
  holdTimersAfterNextBarrier(): void {
    this.holdTimersAtBarrier = true;
  }

  /** The savepoint failed and the job keeps running: held timers fire again (those due at the next message). */
  releaseTimers(): void {
    this.holdTimersAtBarrier = false;
    this.timersHeld = false;
  }

  private waitMs(): number {
    if (this.timersHeld) return 200;
    const next = this.parts.operator?.nextProcessingTimer();
    if (next === undefined) return 200;
    return Math.max(1, Math.min(200, next - this.parts.env.clock.now()));
  }

  /** Returns true when the subtask has seen the end of all its inputs. */
  private async handle(message: InputMessage): Promise<boolean> {
    const { operator, head } = this.parts;
    if (this.aligning) {
      const channel = channelOf(message);
      if (channel !== null && this.aligning.seen.has(channel)) {
        // Aligned checkpoint: this channel is past the barrier; hold its messages until every channel is.
        this.aligning.buffered.push(message);
        return false;
      }
    }
    switch (message.kind) {
      case 'barrier':
        return this.onBarrier(message);
      case 'data': {
        if (message.records.length === 0) {
          await this.emit();
          return false;
        }
        if (operator) {
          if (message.channel >= 0) this.watermarks.onData(message.channel);
          this.recordKeys(message.records as readonly KeyedRecord[]);
          await operator.processBatch(message.records as readonly KeyedRecord[], message.positions);
        } else {
          for (const n of head) n.push(message.records);
        }
        await this.emit(operator ? undefined : message.positions);
        return false;
      }
      case 'broadcast':
        (operator as BroadcastProcessOperator).processBroadcast(message.records);
        await this.emit();
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
        if (this.watermarks.allIdle) await this.forEachTerminal((t) => t.onIdle());
        return false;
      }
      case 'end':
        return this.onEnd(message.channel, message.lane, message.senders);
      case 'tick':
        return false;
      case 'control':
        // Control reads and replaces backend state directly: it must see what the operator holds in memory.
        await operator?.persistState();
        await message.run();
        await this.emit();
        return false;
    }
  }

  private async onBarrier(message: InputMessage & { kind: 'barrier' }): Promise<boolean> {
    if (!this.parts.operator) {
      await this.emit();
      this.parts.onSnapshot(message.checkpointId, {
        stageId: this.parts.stageId,
        subtask: this.parts.env.subtask,
        sourcePositions: message.sourcePositions ?? {},
      });
      await this.forEachTerminal((t) => t.onBarrier(message.checkpointId));
      return false;
    }
    const senders = message.lane === 'data' ? message.senders : undefined;
    // The upstream stage's size as of this checkpoint (a live rescale): more channels count from its first barrier
    // (fewer once the retired ones have ended: onEnd).
    if (senders !== undefined && senders > this.watermarks.channels) await this.resizeChannels(senders);
    if (message.lane === 'data' && message.channel >= this.watermarks.channels) await this.resizeChannels(message.channel + 1);
    this.aligning ??= { checkpointId: message.checkpointId, seen: new Set(), buffered: [] };
    this.aligning.seen.add(channelOf(message)!);
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
    const alignment = this.aligning;
    if (!alignment) return false;
    if (!this.allChannels().every((c) => alignment.seen.has(c) || this.endedChannels.has(c))) return false;
    const operator = this.parts.operator!;
    await this.emit();
    const keyGroups = await operator.snapshotOwnedKeyGroups();
    this.parts.onSnapshot(alignment.checkpointId, {
      stageId: this.parts.stageId,
      subtask: this.parts.env.subtask,
      keyGroups,
      operatorState: operator.snapshotOperatorState(),
      ...(this.parts.exchangePositions ? { exchangePositions: this.parts.exchangePositions() } : {}),
    });
    await this.forEachTerminal((t) => t.onBarrier(alignment.checkpointId));
    this.aligning = null;
    if (this.holdTimersAtBarrier) {
      this.holdTimersAtBarrier = false;
      this.timersHeld = true;
    }
    let finished = false;
    for (const held of alignment.buffered) finished = (await this.handle(held)) || finished;
    return finished;
  }

  private async onEnd(channel: number, lane: 'data' | 'broadcast', senders?: number): Promise<boolean> {
    this.endedChannels.add(`${lane}:${channel}`);
    if (this.aligning && (await this.completeIfAligned())) return true;
    if (senders !== undefined && lane === 'data' && this.parts.operator) {
      // A subtask upstream retired in a live rescale: once every channel from `senders` on has ended, drop them.
      if (channel >= this.watermarks.channels) return false;
      const retired = Array.from({ length: this.watermarks.channels - senders }, (_, i) => `data:${senders + i}`);
      if (retired.length > 0 && retired.every((c) => this.endedChannels.has(c))) await this.resizeChannels(senders);
      else await this.advance(this.watermarks.onEnd(channel));
      return false;
    }
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
    await this.emit();
    await this.forEachTerminal((t) => t.onWatermark(watermark));
  }

  private async fireProcessingTimers(): Promise<void> {
    const operator = this.parts.operator;
    if (!operator || this.timersHeld) return;
    const now = this.parts.env.clock.now();
    const next = operator.nextProcessingTimer();
    if (next === undefined || next > now) return;
    await operator.advanceProcessingTime(now);
    await this.emit();
  }

  private recordKeys(records: readonly KeyedRecord[]): void {
    const metrics = this.parts.env.metrics;
    metrics.onBatchIn(records.length);
    for (const r of records) metrics.offerKey(String(r.key), r.keyGroup);
  }

  /**
   * Hands what the chain holds to its terminals and waits for them: the operator calls it between chunks of a long
   * firing, so that results reach the sink (and become garbage) while they are young instead of all at the end.
   */
  emitOutputs(): Promise<void> {
    return this.emit();
  }

  /** `positions`: those of the source batch just pushed, for keyed exchanges to pass on. */
  private async emit(positions?: Readonly<Record<string, string>>): Promise<void> {
    const { env } = this.parts;
    env.metrics.enter('backpressured', env.clock.now());
    await env.deadLetters.emit();
    await this.forEachTerminal((t) => t.emit(positions));
    env.metrics.enter('busy', env.clock.now());
  }

  private async forEachTerminal(fn: (t: ChainTerminal) => Promise<void>): Promise<void> {
    const terminals = this.parts.terminals;
    if (terminals.length === 1) await fn(terminals[0]);
    else if (terminals.length > 1) await Promise.all(terminals.map(fn));
  }
}
