import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { numberedRecords, testConnector, uniqueTopic } from './support';

describe('Kafka admin', () => {
  const topic = uniqueTopic('admin');
  const configured = uniqueTopic('admin-config');
  let connector: KafkaConnector;
  let admin: KafkaAdmin;

  beforeAll(() => {
    connector = testConnector();
    admin = connector.admin();
  });

  afterAll(async () => {
    await admin.deleteTopics([topic, configured]);
    await admin.close();
  });

  it('creates missing topics and is idempotent', async () => {
    await admin.ensureTopics([{ topic, partitions: 3 }]);
    await admin.ensureTopics([{ topic, partitions: 3 }]);
    await admin.ensureTopics([{ topic, partitions: 2 }]); // fewer than exist is fine
    expect(await admin.partitionCount(topic)).toBe(3);
  });

  it("lists topics by name, without Kafka's internal ones", async () => {
    await admin.ensureTopics([{ topic, partitions: 3 }]);
    const topics = await admin.listTopics();
    expect(topics).toContain(topic);
    expect(topics.filter((t) => t.startsWith('__'))).toEqual([]);
  });

  it('creates topics with config', async () => {
    await admin.ensureTopics([{ topic: configured, partitions: 2, config: { 'retention.ms': '3600000' } }]);
    expect(await admin.partitionCount(configured)).toBe(2);
  });

  it('refuses an existing topic with fewer partitions than needed, naming both counts', async () => {
    const attempt = admin.ensureTopics([{ topic, partitions: 8 }]);
    await expect(attempt).rejects.toMatchObject({ name: 'TopicConfigError' });
    await expect(attempt).rejects.toThrow(/has 3 partitions but 8 are needed/);
  });

  it('rejects invalid topic specs with TopicConfigError', async () => {
    await expect(admin.ensureTopics([{ topic: uniqueTopic('zero'), partitions: 0 }])).rejects.toMatchObject({
      name: 'TopicConfigError',
    });
    await expect(
      admin.ensureTopics([{ topic: uniqueTopic('badcfg'), partitions: 1, config: { 'cleanup.policy': 'sideways' } }]),
    ).rejects.toMatchObject({ name: 'TopicConfigError' });
  });

  it('reports earliest and latest offsets per partition', async () => {
    const writer = connector.writer({ writerId: 'admin-writer' });
    await writer.start();
    await writer.send(numberedRecords(topic, 30, 3));
    await writer.close();
    expect(await admin.offsets(topic)).toEqual([
      { partition: 0, earliest: '0', latest: '10' },
      { partition: 1, earliest: '0', latest: '10' },
      { partition: 2, earliest: '0', latest: '10' },
    ]);
  });

  it('names the missing topic', async () => {
    const missing = uniqueTopic('missing');
    await expect(admin.partitionCount(missing)).rejects.toMatchObject({ name: 'TopicNotFoundError', topic: missing });
    await expect(admin.offsets(missing)).rejects.toMatchObject({ name: 'TopicNotFoundError' });
  });

  it('deletes topics, and deleting a missing one is a no-op', async () => {
    const doomed = uniqueTopic('doomed');
    await admin.ensureTopics([{ topic: doomed, partitions: 1 }]);
    await admin.deleteTopics([doomed]);
    await admin.deleteTopics([doomed]);
    await expect(admin.partitionCount(doomed)).rejects.toMatchObject({ name: 'TopicNotFoundError' });
  });

  it('keeps working after a topic it looked at is deleted by someone else', async () => {
    const other = connector.admin();
    const shortLived = uniqueTopic('short');
    await admin.ensureTopics([{ topic: shortLived, partitions: 1 }]);
    await admin.offsets(shortLived);
    await other.deleteTopics([shortLived]);
    await other.close();
    expect(await admin.partitionCount(topic)).toBe(3);
    expect(await admin.offsets(topic)).toHaveLength(3);
  });

  it('pings a live broker', async () => {
    await expect(admin.ping()).resolves.toBeUndefined();
  });

  it('reports an unreachable broker as KafkaUnavailableError, within the ping timeout', async () => {
    const dead = createKafkaConnector({ brokers: ['127.0.0.1:1'], clientId: 'weir-test-dead', logLevel: 'error', log: () => {} });
    const deadAdmin = dead.admin();
    await expect(deadAdmin.ping(1_000)).rejects.toMatchObject({ name: 'KafkaUnavailableError' });
    await expect(deadAdmin.partitionCount('anything')).rejects.toMatchObject({ name: 'KafkaUnavailableError' });
    await deadAdmin.close();
  });
});
