import type { InputMessage } from './records';

/** A subtask's input channel as alignment names it: `data:3`, `broadcast:0`; null for what belongs to none. */
export function channelOf(message: InputMessage): string | null {
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
 * Aligned checkpoint barriers over a subtask's input channels (Flink's aligned checkpoints): once a channel has
 * delivered the barrier, its later messages are held until every channel has (or has ended); then the subtask takes
 * its part of the cut and replays what was held. A source subtask has one input and is aligned at its barrier.
 */
export class BarrierAlignment {
  private current: { readonly checkpointId: number; readonly seen: Set<string>; readonly held: InputMessage[] } | null = null;

  get aligning(): boolean {
    return this.current !== null;
  }

  /** Holds `message` if its channel is past the barrier being aligned; false if the subtask handles it now. */
  hold(message: InputMessage): boolean {
    const current = this.current;
    if (!current) return false;
    const channel = channelOf(message);
    if (channel === null || !current.seen.has(channel)) return false;
    current.held.push(message);
    return true;
  }

  /** A barrier arrived on `channel` (the first one starts its checkpoint's alignment). */
  arrive(checkpointId: number, channel: string): void {
    this.current ??= { checkpointId, seen: new Set(), held: [] };
    this.current.seen.add(channel);
  }

  /**
   * When every channel has delivered the barrier or ended: the checkpoint and the messages held meanwhile (to be
   * handled in order after the subtask's snapshot), and alignment is over. Otherwise null.
   */
  complete(channels: readonly string[], ended: ReadonlySet<string>): { readonly checkpointId: number; readonly held: readonly InputMessage[] } | null {
    const current = this.current;
    if (!current || !channels.every((c) => current.seen.has(c) || ended.has(c))) return null;
    this.current = null;
    return { checkpointId: current.checkpointId, held: current.held };
  }
}
