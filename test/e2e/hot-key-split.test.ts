/**
 * A viral key split and folded back by the partitioner on a real deployment, end to end: the splittable window job
 * (per key count and sum over tumbling windows, exactly-once sink, checkpoints every 300 ms) in two job host processes
 * on two workers, partitioner in mode auto looking every second, cool-down 2 s (the scaling policy over the API).
 * One key jumps to 70% of the records: a decision splits it over both subtasks and the run reports the table in
 * effect. The burst ends (the key falls to 2%): a later decision folds it back. No key group moves (a window
 * operator's stay put). The committed windows equal those computed from the input, each once, through the split and
 * the fold-back.
 */
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { describe, expect, it } from 'vitest';
import { readAll } from '../chaos/support';
import { expectedWindows, splitInput, SPLIT_OPERATORS, splitWindowJobSource, windowsUpTo } from '../chaos/split-window-job';
import { buildJob, deleteTopics, insertBundle, waitForStatus } from '../control-plane/deployments/support';
import { eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';

const PARTITIONS = 2;
/** Records per second fed, in batches every 100 ms. */
const RATE = 1_500;

interface Decision {
  decisionId: string;
  kind: string;
  operatorId: string;
  reason: string;
  splits: { key: string; keyGroup: number; subtasks: number[]; weights: number[] }[];
  foldBacks: { key: string; keyGroup: number; toSubtask: number }[];
}

describe('a viral key split and folded back on a running deployment', { timeout: 300_000 }, () => {
  let deploymentId = '';
  const platform = platformFixture({
    name: 'split',
    heartbeatMs: 1_000,
    workers: 0,
    workerSlots: 1,
    topics: { input: 'in', output: 'out' },
    partitions: PARTITIONS,
    afterStop: async () => {
      if (!deploymentId) return;
      const stages = ['counts', 'counts-merge'].map((stage) => exchangeTopic(platform.tenant.tenantId, deploymentId, stage));
      await deleteTopics(platform.kafka, [...stages, runControlTopic(platform.tenant.tenantId, deploymentId)]);
    },
  });

  it('splits the viral key while it is hot, folds it back once it cools, and every window stays exact', async () => {
    const { client } = platform;
    await platform.startWorker('a', 1);
    await platform.startWorker('b', 1);
    const { input, output } = platform.topics;
    const job = await buildJob(platform.home, splitWindowJobSource(input, output));
    const bundleId = await insertBundle(platform.config, platform.tenant.tenantId, job, { name: 'split-windows', version: '1.0.0', operatorIds: SPLIT_OPERATORS, topics: [input, output] });
    const id = (deploymentId = await platform.deploy({
      name: `split-${platform.run}`,
      bundleId,
      parallelism: { default: 2, operators: {} },
      partitionerMode: 'auto',
      autoscalerMode: 'off',
      config: { properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once', 'partitioner.interval-ms': '1000' } },
    }));
    await waitForStatus(client, id, 'RUNNING', 90_000);
    const policy = await client.call('PATCH', `/v1/deployments/${id}/scaling-policy`, { partitioner: { coolDownMs: 2_000 } });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);

    // Record i's key: 70% "viral" until the burst ends at record `calmFrom`, 2% after.
    let calmFrom = Number.POSITIVE_INFINITY;
    const keyOf = (i: number) => ((i < calmFrom ? i % 10 < 7 : i % 50 === 0) ? 'viral' : `k${i % 20}`);
    const writer = platform.kafka.writer({ writerId: `split-in-${platform.run}` });
    await writer.start();
    let produced = 0;
    let feeding = true;
    const feed = (async () => {
      while (feeding) {
        const to = produced + RATE / 10;
        await writer.send(splitInput(input, produced, to, PARTITIONS, keyOf));
        produced = to;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const decisions = async () => ((await client.get(`/v1/deployments/${id}/scaling-decisions?limit=100`)).body as { items: Decision[] }).items;
    try {
      const split = await eventually(
        'a decision splitting the viral key',
        async () => (await decisions()).find((d) => d.operatorId === 'counts' && d.splits.some((s) => s.key === 'viral')),
        { timeoutMs: 90_000, everyMs: 500 },
      );
      expect(split.splits.find((s) => s.key === 'viral')!.subtasks).toHaveLength(2);
      expect(split.reason).toContain('splitting key "viral"');

      calmFrom = produced + RATE;
      const folded = await eventually(
        'a decision folding the viral key back',
        async () => (await decisions()).find((d) => d.operatorId === 'counts' && d.foldBacks.some((f) => f.key === 'viral')),
        { timeoutMs: 90_000, everyMs: 500 },
      );
      // A window operator's key groups are not moved live: the split and the fold-back are all it does.
      expect(folded.kind).toBe('SPLIT_KEYS');
      expect(split.kind).toBe('SPLIT_KEYS');
      expect(folded.reason).toContain('folding key "viral" back');
      expect(folded.decisionId > split.decisionId).toBe(true);
      // A little more after the fold-back, then the windows so far.
      const upTo = produced + RATE * 2;
      while (produced < upTo) await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      feeding = false;
      await feed;
      await writer.close();
    }
    const expected = expectedWindows(produced - RATE, keyOf);
    const read = await readAll(platform.kafka, output, 2, (n) => n >= expected.length, 30_000);
    const windows = windowsUpTo(read, expected);
    const ids = windows.map((w) => `${w.key}@${w.start}`);
    expect(ids.filter((w, i) => ids.indexOf(w) !== i).slice(0, 5), 'duplicated windows').toEqual([]);
    const got = new Set(windows.map((w) => JSON.stringify(w)));
    const want = new Set(expected.map((w) => JSON.stringify(w)));
    expect({ missing: [...want].filter((w) => !got.has(w)), unexpected: [...got].filter((w) => !want.has(w)) }).toEqual({ missing: [], unexpected: [] });
    expect(windows).toEqual(expected);
    expect(((await client.get(`/v1/deployments/${id}/key-group-moves`)).body as { items: unknown[] }).items).toEqual([]);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED', 60_000);
  });
});
