/**
 * The fraud-detection reference job as a bundle: several files, @weir/rules (and ajv) inside, its topics and limits
 * taken from the deployment's config when the worker loads it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle } from '@weir/bundle';
import { JobParameterError, type NodeSpec } from '@weir/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '../../apps/worker/src/bundles/load-bundle';
import { buildFraudJob, fraudJobConfig, tenantFraudTopics } from '../../examples/fraud-detection';

describe('the fraud-detection bundle', () => {
  let dir: string;
  let path: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weir-fraud-bundle-'));
    const built = await buildBundle('examples/fraud-detection/index.ts');
    path = join(dir, `${built.sha256}.js`);
    await writeFile(path, built.code);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const topicOf = (node: NodeSpec | undefined) => (node && (node.kind === 'source' || node.kind === 'sink') && 'topic' in node.spec ? node.spec.topic : undefined);

  it('reads and writes the topics its deployment names, with the same graph as the job built in-process', () => {
    const topics = tenantFraudTopics('acme');
    const definition = loadBundle(path, fraudJobConfig(topics, { maxWindowMs: 60_000 }));
    const byId = new Map(definition.nodes.map((n) => [n.id, n]));
    expect(topicOf(byId.get('transactions'))).toBe('t.acme.transactions');
    expect(topicOf(byId.get('rules'))).toBe('t.acme.rules');
    expect(topicOf(byId.get('alerts'))).toBe('t.acme.alerts');
    expect(topicOf(byId.get('shadow-alerts'))).toBe('t.acme.shadow-alerts');
    expect(topicOf(byId.get('rule-acks'))).toBe('t.acme.rule-acks');
    expect(definition.nodes.map((n) => n.id)).toEqual(buildFraudJob({ ...topics, maxWindowMs: 60_000 }).nodes.map((n) => n.id));
  });

  it('defaults the shadow-alerts topic, and refuses a config that lacks a topic, naming it', () => {
    const { 'shadow-alerts': _shadow, ...topics } = fraudJobConfig(tenantFraudTopics('acme')).topics;
    const definition = loadBundle(path, { topics });
    expect(topicOf(definition.nodes.find((n) => n.id === 'shadow-alerts'))).toBe('t.acme.alerts.shadow');

    const { rules: _rules, ...withoutRules } = topics;
    let err: unknown;
    try {
      loadBundle(path, { topics: withoutRules, properties: { 'max-window-ms': 'a day' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JobParameterError);
    expect((err as Error).message).toMatch(/config\.topics\.rules: is missing.*config\.properties\.max-window-ms: "a day" is not an integer/);
  });
});
