import type { KafkaTransaction, KafkaWriter, ProducedRecord } from '@weir/kafka';
import { describe, expect, it } from 'vitest';
import { WriteBehind } from './write-behind';

/** A writer whose sends complete when the test says so. */
class ManualWriter implements KafkaWriter {
  readonly sent: ProducedRecord[][] = [];
  private readonly pending: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  inFlight = 0;
  maxInFlight = 0;

  start(): Promise<void> {
    return Promise.resolve();
  }
  send(records: readonly ProducedRecord[]): Promise<void> {
    this.sent.push([...records]);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject })).finally(() => this.inFlight--);
  }
  ack(): void {
    this.pending.shift()!.resolve();
  }
  fail(err: Error): void {
    this.pending.shift()!.reject(err);
  }
  transaction(): Promise<KafkaTransaction> {
    return Promise.reject(new Error('not used'));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const records = (from: number, count: number): ProducedRecord[] =>
  Array.from({ length: count }, (_, i) => ({ topic: 't', value: String(from + i) }));
const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('WriteBehind', () => {
  it('returns before the ack, sends one request at a time, and batches what arrived meanwhile, in order', async () => {
    const writer = new ManualWriter();
    const behind = new WriteBehind(writer, () => writer.start());
    await behind.add(records(0, 2));
    await flushed();
    await behind.add(records(2, 3));
    await behind.add(records(5, 1));
    expect(writer.sent).toHaveLength(1);
    writer.ack();
    await flushed();
    expect(writer.sent).toHaveLength(2);
    let drained = false;
    const drain = behind.drain().then(() => (drained = true));
    await flushed();
    expect(drained).toBe(false);
    writer.ack();
    await drain;
    expect(writer.sent.map((batch) => batch.map((r) => r.value))).toEqual([['0', '1'], ['2', '3', '4', '5']]);
    expect(writer.maxInFlight).toBe(1);
  });

  it('makes the caller wait once too many records are outstanding', async () => {
    const writer = new ManualWriter();
    const behind = new WriteBehind(writer, () => writer.start());
    let returned = false;
    const add = behind.add(records(0, 20_000)).then(() => (returned = true));
    await flushed();
    expect(returned).toBe(false);
    while (!returned) {
      writer.ack();
      await flushed();
    }
    await add;
    expect(behind.outstanding).toBeLessThan(20_000);
  });

  it('fails every later add and drain with the first failed send', async () => {
    const writer = new ManualWriter();
    const behind = new WriteBehind(writer, () => writer.start());
    await behind.add(records(0, 1));
    await flushed();
    writer.fail(new Error('broker said no'));
    await expect(behind.drain()).rejects.toThrow('broker said no');
    await expect(behind.add(records(1, 1))).rejects.toThrow('broker said no');
  });
});
