import type { KeyedRecord, StreamRecord } from '../records';

/** The sending side of a keyBy edge. `channel` is the sending subtask's index. */
export interface KeyedSender {
  /** `positions` travel with the records (see InputMessage); an exchange may drop them. */
  send(channel: number, records: readonly KeyedRecord[], positions?: Readonly<Record<string, string>>): Promise<void>;
  sendWatermark(channel: number, watermark: number): Promise<void>;
  sendIdle(channel: number): Promise<void>;
  sendEnd(channel: number): Promise<void>;
  sendBarrier(channel: number, checkpointId: number): Promise<void>;
}

/** The sending side of a broadcast edge: every record reaches every receiving subtask. */
export interface BroadcastSender {
  send(channel: number, records: readonly StreamRecord[]): Promise<void>;
  sendEnd(channel: number): Promise<void>;
  sendBarrier(channel: number, checkpointId: number): Promise<void>;
}

export interface KeyGroupMove {
  readonly keyGroup: number;
  readonly toSubtask: number;
}

export class ExchangeError extends Error {
  override readonly name = 'ExchangeError';
}
