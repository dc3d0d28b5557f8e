import { MAX_WATERMARK, MIN_WATERMARK } from './records';

/**
 * Min-combines watermarks across a subtask's input channels. Idle channels do not hold the watermark back;
 * ended channels count as +∞. Returns the new combined watermark only when it advanced.
 */
export class InputWatermarks {
  private marks: number[];
  private idle: boolean[];
  private ended: boolean[];
  private combined = MIN_WATERMARK;

  constructor(channels: number) {
    this.marks = new Array<number>(channels).fill(MIN_WATERMARK);
    this.idle = new Array<boolean>(channels).fill(false);
    this.ended = new Array<boolean>(channels).fill(false);
  }

  get current(): number {
    return this.combined;
  }

  get channels(): number {
    return this.marks.length;
  }

  /**
   * A live rescale changed the upstream stage's subtask count. New channels start idle (they hold event time back
   * from their first watermark on, and a new subtask sends one before its first records); channels dropped are
   * those of retired subtasks, which sent their last barrier already. Returns the combined watermark if it advanced.
   */
  resize(channels: number): number | null {
    while (this.marks.length < channels) {
      this.marks.push(MIN_WATERMARK);
      this.idle.push(true);
      this.ended.push(false);
    }
    if (channels < this.marks.length) {
      this.marks = this.marks.slice(0, channels);
      this.idle = this.idle.slice(0, channels);
      this.ended = this.ended.slice(0, channels);
    }
    return this.recompute();
  }

  get allEnded(): boolean {
    return this.ended.every(Boolean);
  }

  /** Every input that has not ended is idle: downstream should not wait for this subtask's event time either. */
  get allIdle(): boolean {
    return this.idle.some(Boolean) && this.idle.every((idle, c) => idle || this.ended[c]);
  }

  onWatermark(channel: number, watermark: number): number | null {
    this.cover(channel);
    this.idle[channel] = false;
    if (watermark > this.marks[channel]) this.marks[channel] = watermark;
    return this.recompute();
  }

  onData(channel: number): void {
    this.cover(channel);
    this.idle[channel] = false;
  }

  onIdle(channel: number): number | null {
    this.cover(channel);
    this.idle[channel] = true;
    return this.recompute();
  }

  onEnd(channel: number): number | null {
    this.cover(channel);
    this.ended[channel] = true;
    this.marks[channel] = MAX_WATERMARK;
    return this.recompute();
  }

  /** A channel past the known ones is a new upstream subtask (a live rescale): adding it never advances time. */
  private cover(channel: number): void {
    if (channel >= this.marks.length) this.resize(channel + 1);
  }

  private recompute(): number | null {
    let min = MAX_WATERMARK;
    let active = 0;
    let open = 0;
    for (let c = 0; c < this.marks.length; c++) {
      if (this.ended[c]) continue;
      open++;
      if (this.idle[c]) continue;
      active++;
      if (this.marks[c] < min) min = this.marks[c];
    }
    // Ended channels never hold event time back; idle ones neither, but idle alone is no reason to advance it.
    if (open > 0 && active === 0) return null;
    if (min <= this.combined) return null;
    this.combined = min;
    return min;
  }
}

/**
 * Bounded-out-of-orderness watermarks for one source subtask across the partitions it reads. A partition that has
 * been silent for `idleTimeoutMs` stops holding the watermark back until it produces again.
 */
export class SourceWatermarks {
  private readonly maxTs = new Map<number, number>();
  private readonly lastActive = new Map<number, number>();
  private emitted = MIN_WATERMARK;
  private idleEmitted = false;

  constructor(
    private readonly maxOutOfOrdernessMs: number,
    private readonly idleTimeoutMs: number | undefined,
    partitions: readonly number[],
    now: number,
  ) {
    for (const p of partitions) this.lastActive.set(p, now);
  }

  /**
   * A partition this subtask reads from now on (a live rescale moved it here), its event time where its old owner had
   * it: the highest timestamp seen there, or null if none was.
   */
  add(partition: number, maxTimestamp: number | null, now: number): void {
    if (maxTimestamp !== null) this.maxTs.set(partition, maxTimestamp);
    this.lastActive.set(partition, now);
    this.idleEmitted = false;
  }

  /** Stops tracking a partition moved away; returns its highest timestamp seen (for its new owner), or null. */
  remove(partition: number): number | null {
    const max = this.maxTs.get(partition);
    this.maxTs.delete(partition);
    this.lastActive.delete(partition);
    return max ?? null;
  }

  observe(partition: number, timestamp: number, now: number): void {
    const prev = this.maxTs.get(partition);
    if (prev === undefined || timestamp > prev) this.maxTs.set(partition, timestamp);
    this.lastActive.set(partition, now);
  }

  /** 'idle' when every partition is idle, a number when the watermark advanced, null otherwise. */
  poll(now: number): number | 'idle' | null {
    let min = MAX_WATERMARK;
    let active = 0;
    for (const [partition, last] of this.lastActive) {
      if (this.idleTimeoutMs !== undefined && now - last >= this.idleTimeoutMs) continue;
      active++;
      const ts = this.maxTs.get(partition);
      const mark = ts === undefined ? MIN_WATERMARK : ts - this.maxOutOfOrdernessMs - 1;
      if (mark < min) min = mark;
    }
    if (active === 0) {
      // A subtask that reads no partition (yet, or any more after a live rescale) is idle once it had emitted time.
      if (this.idleEmitted || (this.lastActive.size === 0 && this.emitted === MIN_WATERMARK)) return null;
      this.idleEmitted = true;
      return 'idle';
    }
    this.idleEmitted = false;
    if (min > this.emitted && min !== MAX_WATERMARK) {
      this.emitted = min;
      return min;
    }
    return null;
  }
}
