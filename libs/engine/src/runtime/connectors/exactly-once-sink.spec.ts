import type { KafkaConnector, KafkaTransaction, KafkaWriter, ProducedRecord } from '@weir/kafka';
import { describe, expect, it } from 'vitest';
import { json } from '../../sdk/serde';
import type { KafkaSinkSpec } from '../../sdk/connectors';
import { ExactlyOnceKafkaSinkWriter, sinkTransactionalId } from './exactly-once-sink';

/** A fake transactional writer: records what each committed transaction held. */
function fakeKafka() {
  const committed: ProducedRecord[][] = [];
  const writerOptions: { transactionalId?: string }[] = [];
  const writer: KafkaWriter = {
    start: async () => undefined,
    send: async () => undefined,
    close: async () => undefined,
    transaction: async (): Promise<KafkaTransaction> => {
      const held: ProducedRecord[] = [];
      return { send: async (r) => void held.push(...r), commit: async () => void committed.push(held), abort: async () => undefined };
    },
  };
  const kafka = { writer: (o: { transactionalId?: string }) => (writerOptions.push(o), writer) } as unknown as KafkaConnector;
  return { kafka, committed, writerOptions };
}

const spec = { kind: 'kafka', topic: 'out', format: json<{ n: number }>(), key: (v: { n: number }) => `k${v.n}` } as unknown as KafkaSinkSpec<unknown>;
const id = { tenantId: 't1', jobId: 'j1', sinkId: 'out', subtask: 2 };
const rec = (n: number) => ({ value: { n }, timestamp: n, ingestMs: 0 });

describe('ExactlyOnceKafkaSinkWriter', () => {
  it('writes nothing until the checkpoint completes, then one transaction with the epoch and its marker', async () => {
    const { kafka, committed, writerOptions } = fakeKafka();
    const sink = new ExactlyOnceKafkaSinkWriter(kafka, id, spec, 'commits');
    expect(writerOptions[0].transactionalId).toBe(sinkTransactionalId(id));
    await sink.write([rec(1), rec(2)]);
    sink.seal(5);
    await sink.write([rec(3)]); // the next epoch
    expect(committed).toEqual([]);
    const epoch = await sink.sealedEpoch(5);
    expect(epoch.records.map((r) => r.value.toString())).toEqual(['{"n":1}', '{"n":2}']);
    await sink.commit(5);
    expect(committed).toHaveLength(1);
    expect(committed[0].map((r) => r.topic)).toEqual(['out', 'out', 'commits']);
    expect(committed[0][2]).toMatchObject({ key: 'out/2', value: JSON.stringify({ checkpointId: 5 }) });
    await sink.commit(5); // committed once
    expect(committed).toHaveLength(1);
  });

  it('an epoch whose checkpoint failed joins the next one, so that checkpoint carries its records', async () => {
    const { kafka, committed } = fakeKafka();
    const sink = new ExactlyOnceKafkaSinkWriter(kafka, id, spec, 'commits');
    await sink.write([rec(1)]);
    sink.seal(5); // checkpoint 5 fails: never committed
    await sink.write([rec(2)]);
    sink.seal(6);
    expect((await sink.sealedEpoch(6)).records).toHaveLength(2);
    await sink.commit(6);
    expect(committed[0].filter((r) => r.topic === 'out').map((r) => r.value!.toString())).toEqual(['{"n":1}', '{"n":2}']);
  });

  it('sealedEpoch waits for the barrier', async () => {
    const { kafka } = fakeKafka();
    const sink = new ExactlyOnceKafkaSinkWriter(kafka, id, spec, 'commits');
    const pending = sink.sealedEpoch(9);
    await sink.write([rec(4)]);
    sink.seal(9);
    expect((await pending).checkpointId).toBe(9);
  });
});
