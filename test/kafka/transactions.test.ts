import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaConnector } from '@weir/kafka';
import { pollFor, pollUntil, testConnector, uniqueTopic } from './support';

describe('Kafka transactions', () => {
  const topic = uniqueTopic('tx');
  const txId = `${topic}.writer`;
  let connector: KafkaConnector;
  let admin: KafkaAdmin;

  beforeAll(async () => {
    connector = testConnector();
    admin = connector.admin();
    await admin.ensureTopics([{ topic, partitions: 1 }]);
  });

  afterAll(async () => {
    await admin.deleteTopics([topic]);
    await admin.close();
  });

  it('hides aborted and open transactions from read_committed readers and shows committed ones', async () => {
    const writer = connector.writer({ writerId: 'tx-writer', transactionalId: txId });
    await writer.start();
    const aborted = await writer.transaction();
    await aborted.send([{ topic, value: 'aborted-1' }, { topic, value: 'aborted-2' }]);
    await aborted.abort();
    const committed = await writer.transaction();
    await committed.send([{ topic, value: 'committed-1' }]);
    await committed.send([{ topic, value: 'committed-2' }]);
    await committed.commit();

    const reader = connector.reader({ readerId: 'tx-committed', assignments: [{ topic, partition: 0, offset: 'earliest' }] });
    await reader.start();
    const seen = await pollUntil(reader, 2);
    expect(seen.map((r) => r.value?.toString())).toEqual(['committed-1', 'committed-2']);

    const open = await writer.transaction();
    await open.send([{ topic, value: 'pending' }]);
    expect(await pollFor(reader, 500)).toHaveLength(0);
    await open.commit();
    const late = await pollUntil(reader, 1);
    expect(late.map((r) => r.value?.toString())).toEqual(['pending']);
    expect(await pollFor(reader, 300)).toHaveLength(0);

    // Markers and aborted records are not lag: the position moves past them once everything before is polled.
    const end = (await admin.offsets(topic))[0].latest;
    expect(reader.positions().get(`${topic}:0`)).toBe(end);
    expect(reader.lag().get(`${topic}:0`)).toBe(0);
    await reader.close();

    const uncommitted = connector.reader({
      readerId: 'tx-uncommitted',
      isolation: 'read_uncommitted',
      assignments: [{ topic, partition: 0, offset: 'earliest' }],
    });
    await uncommitted.start();
    const all = await pollUntil(uncommitted, 5);
    await uncommitted.close();
    expect(all.map((r) => r.value?.toString())).toEqual(['aborted-1', 'aborted-2', 'committed-1', 'committed-2', 'pending']);

    await expect(committed.commit()).rejects.toMatchObject({ name: 'KafkaUsageError' });
    await writer.close();
  });

  it('fences a zombie writer when another takes over its transactionalId', async () => {
    const zombie = connector.writer({ writerId: 'tx-zombie', transactionalId: `${txId}.fence` });
    await zombie.start();
    const tx = await zombie.transaction();
    await tx.send([{ topic, value: 'zombie' }]);

    const successor = connector.writer({ writerId: 'tx-successor', transactionalId: `${txId}.fence` });
    await successor.start();
    const next = await successor.transaction();
    await next.send([{ topic, value: 'successor' }]);
    await next.commit();

    await expect(tx.commit()).rejects.toMatchObject({ name: 'KafkaFencedError' });
    await Promise.all([zombie.close(), successor.close()]);
  });

  it('refuses transactions on a writer without a transactionalId', async () => {
    const writer = connector.writer({ writerId: 'tx-plain' });
    await writer.start();
    await expect(writer.transaction()).rejects.toMatchObject({ name: 'KafkaUsageError' });
    await writer.close();
  });
});
