/**
 * End to end over HTTP against the real services: a tenant uploads a bundle, deploys it, records flow through Kafka
 * (its input topic → keyed windows on a real worker → its output topic), then it is suspended and resumed and
 * records flow again.
 */
import type { KafkaReader } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJob, waitForDeployment, waitForStatus, wordCountSource } from '../control-plane/deployments/support';
import { eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';
import { uploadBundle } from './upload-bundle';

interface WindowCount {
  word: string;
  start: number;
  n: number;
}

describe('deploy end to end', () => {
  const platform = platformFixture({ name: 'e2e', topics: { input: 'words', output: 'counts' } });
  const { run } = platform;
  let reader: KafkaReader;
  const counts: WindowCount[] = [];

  beforeAll(async () => {
    reader = platform.kafka.reader({ readerId: `e2e-out-${run}`, assignments: [{ topic: platform.topics.output, partition: 0, offset: 'earliest' }] });
    await reader.start();
  });

  afterAll(async () => {
    await reader?.close();
  });

  /** Sends words stamped inside [windowStart, windowStart + 1000), then a record that closes that window. */
  async function sendWindow(words: string[], windowStart: number): Promise<void> {
    const { kafka, topics } = platform;
    const writer = kafka.writer({ writerId: `e2e-${run}-${windowStart}` });
    await writer.start();
    await writer.send(words.map((word, i) => ({ topic: topics.input, partition: 0, value: JSON.stringify({ word, ts: windowStart + i }) })));
    await writer.send([{ topic: topics.input, partition: 0, value: JSON.stringify({ word: 'zz-end', ts: windowStart + 4_000 }) }]);
    await writer.close();
  }

  async function countsOf(windowStart: number, words: number): Promise<WindowCount[]> {
    return eventually(`window ${windowStart} on ${platform.topics.output}`, async () => {
      for (const r of await reader.poll(1000, 200)) counts.push(JSON.parse(r.value!.toString()) as WindowCount);
      const window = counts.filter((c) => c.start === windowStart);
      return window.length >= words ? window.sort((a, b) => a.word.localeCompare(b.word)) : undefined;
    }, { timeoutMs: 60_000, everyMs: 50 });
  }

  it('upload → deploy → records flow → suspend → resume → records flow', async () => {
    const { client, cp, tenant, topics, worker } = platform;
    const job = await buildJob(platform.home, wordCountSource(topics.input, topics.output));
    const bundle = await uploadBundle(cp.url, tenant.writeKey, job, { name: 'word-count', version: '1.0.0', topics: [topics.input, topics.output] });

    const created = await client.post('/v1/deployments', {
      name: 'word-count',
      bundle: { name: 'word-count', version: '1.0.0' },
      parallelism: { default: 1, operators: { counts: 2 } },
      config: { topics: { words: topics.input, counts: topics.output } },
    }, { 'idempotency-key': `e2e-${run}` });
    expect(created.status).toBe(201);
    const deploymentId = created.body.id as string;
    platform.track(deploymentId);
    expect(created.body.bundleId).toBe(bundle);
    await waitForStatus(client, deploymentId, 'RUNNING');

    await sendWindow(['apple', 'pear', 'apple', 'fig', 'apple', 'pear'], 1_000);
    expect(await countsOf(1_000, 3)).toEqual([
      { word: 'apple', start: 1_000, n: 3 },
      { word: 'fig', start: 1_000, n: 1 },
      { word: 'pear', start: 1_000, n: 2 },
    ]);

    expect((await client.patch(`/v1/deployments/${deploymentId}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    await waitForStatus(client, deploymentId, 'SUSPENDED');
    expect(worker.supervisor.runningSubtasks().filter((s) => s.jobId === deploymentId)).toEqual([]);

    expect((await client.patch(`/v1/deployments/${deploymentId}`, { desiredState: 'RUNNING' })).status).toBe(200);
    await waitForDeployment(client, deploymentId, 'running again', (d) => d.status === 'RUNNING' && d.runNo === 2);

    await sendWindow(['kiwi', 'kiwi', 'plum'], 20_000);
    expect(await countsOf(20_000, 2)).toEqual([
      { word: 'kiwi', start: 20_000, n: 2 },
      { word: 'plum', start: 20_000, n: 1 },
    ]);

    const history = await client.get(`/v1/deployments/${deploymentId}/history`);
    expect(history.body.transitions.map((t: { to: string }) => t.to)).toEqual(['CREATED', 'STARTING', 'RUNNING', 'STOPPING', 'SUSPENDED', 'STARTING', 'RUNNING']);
  });
});
