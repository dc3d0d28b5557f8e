import type { KafkaConnector, ProducedRecord } from '@weir/kafka';
import { describe, expect, it } from 'vitest';
import { KafkaRunControl } from './kafka-run-control';

/** A connector whose writer records each send's batch and acknowledges it when told; the reader reads nothing. */
function fakeKafka(failSend: (n: number) => boolean = () => false) {
  const sends: string[][] = [];
  const pending: (() => void)[] = [];
  const kafka = {
    admin: () => ({ ensureTopics: async () => undefined, close: async () => undefined }),
    writer: () => ({
      start: async () => undefined,
      close: async () => undefined,
      send: (records: readonly ProducedRecord[]) => {
        const n = sends.push(records.map((r) => (JSON.parse(String(r.value)) as { message: { type: string; checkpointId?: number } }).message.checkpointId!.toString()));
        return new Promise<void>((resolve, reject) => pending.push(() => (failSend(n) ? reject(new Error('broker unavailable')) : resolve())));
      },
    }),
    reader: () => ({
      start: async () => undefined,
      close: async () => undefined,
      poll: () => new Promise((resolve) => setTimeout(() => resolve([]), 5)),
    }),
  } as unknown as KafkaConnector;
  const ackNext = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { kafka, sends, ackNext };
}

const trigger = (checkpointId: number) => ({ type: 'trigger' as const, checkpointId });

describe('KafkaRunControl.publish', () => {
  it('sends what is published while a send is in flight together in the next send, in order', async () => {
    const { kafka, sends, ackNext } = fakeKafka();
    const channel = new KafkaRunControl(kafka, { tenantId: 't', jobId: 'j', run: 1, process: 0 });
    await channel.start(() => undefined);
    const published = [1, 2, 3, 4].map((id) => channel.publish(trigger(id)));
    await ackNext();
    await ackNext();
    await Promise.all(published);
    expect(sends).toEqual([['1'], ['2', '3', '4']]);
    await channel.close();
  });

  it('fails only the messages of a failed send; later ones go out', async () => {
    const { kafka, sends, ackNext } = fakeKafka((n) => n === 1);
    const channel = new KafkaRunControl(kafka, { tenantId: 't', jobId: 'j', run: 1, process: 0 });
    await channel.start(() => undefined);
    const first = channel.publish(trigger(1));
    const firstFailed = expect(first).rejects.toThrow('broker unavailable');
    await ackNext();
    await firstFailed;
    const second = channel.publish(trigger(2));
    await ackNext();
    await expect(second).resolves.toBeUndefined();
    expect(sends).toEqual([['1'], ['2']]);
    await channel.close();
  });
});
