import { encodeKey, type KeyValue } from '../keygroups';

/** A record inside the engine. Treated as immutable: operators build new records, never edit one. */
export interface StreamRecord {
  readonly value: unknown;
  /** Event time, epoch ms. */
  readonly timestamp: number;
  /** Processing time when the record entered the job (read from its source), epoch ms. */
  readonly ingestMs: number;
  /** The bytes the record was decoded from, kept for dead letters (sources only). */
  readonly raw?: Buffer;
}

/** A record after keyBy: the key, its serialised form and its key group travel with it through the exchange. */
export interface KeyedRecord extends StreamRecord {
  readonly key: KeyValue;
  readonly keyBytes: Uint8Array;
  readonly keyGroup: number;
}

/**
 * The KeyedRecord keyBy builds. The serialised key is built on first use: most records are only routed (their key
 * group comes from hashKey, which needs no buffer), and a window operator holding its state in memory never needs it.
 */
export class RoutedRecord implements KeyedRecord {
  private bytes: Uint8Array | undefined = undefined;

  constructor(
    readonly value: unknown,
    readonly timestamp: number,
    readonly ingestMs: number,
    readonly raw: Buffer | undefined,
    readonly key: KeyValue,
    readonly keyGroup: number,
  ) {}

  get keyBytes(): Uint8Array {
    return (this.bytes ??= encodeKey(this.key));
  }
}

export const MIN_WATERMARK = Number.NEGATIVE_INFINITY;
export const MAX_WATERMARK = Number.POSITIVE_INFINITY;

/** What a subtask's input queue carries. `channel` is the index of the upstream subtask that sent it. */
export type InputMessage =
  /**
   * `positions` (source batches, and the keyed batches they feed within one process): per source partition
   * (`topic:partition`), the offset after the last record of that partition read up to this batch.
   */
  | { readonly kind: 'data'; readonly channel: number; readonly records: readonly StreamRecord[]; readonly positions?: Readonly<Record<string, string>> }
  | { readonly kind: 'broadcast'; readonly channel: number; readonly records: readonly StreamRecord[] }
  | { readonly kind: 'watermark'; readonly channel: number; readonly watermark: number }
  | { readonly kind: 'idle'; readonly channel: number }
  /**
   * The channel sends nothing more. Over the Kafka exchange, `senders` says the channel's subtask retired in a live
   * rescale that left its stage this many subtasks: once every channel from there on has ended, they are dropped.
   */
  | { readonly kind: 'end'; readonly channel: number; readonly lane: 'data' | 'broadcast'; readonly senders?: number }
  /**
   * A checkpoint barrier (aligned): everything before it on a channel belongs to checkpoint `checkpointId`.
   * Sources put it in their own input with the source positions it stands for.
   */
  | {
      readonly kind: 'barrier';
      readonly checkpointId: number;
      readonly channel: number;
      readonly lane: 'data' | 'broadcast';
      readonly sourcePositions?: Readonly<Record<string, string>>;
      /**
       * Over the Kafka exchange, data lane: how many subtasks the sending stage has from this checkpoint on. A live
       * rescale changes it between two checkpoints; the receiving subtask aligns over that many channels.
       */
      readonly senders?: number;
    }
  /** Processing time moved (the test driver's clock); lets processing-time timers fire. */
  | { readonly kind: 'tick' }
  /**
   * Runs in-band, between the messages before and after it: key-group hand-over and snapshots use it, so they see
   * exactly the records that preceded them (the same position a checkpoint barrier marks).
   */
  | { readonly kind: 'control'; readonly run: () => Promise<void> };

export function messageSize(message: InputMessage): number {
  return message.kind === 'data' || message.kind === 'broadcast' ? message.records.length : 1;
}
