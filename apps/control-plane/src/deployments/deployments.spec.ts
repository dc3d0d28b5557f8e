import { describe, expect, it } from 'vitest';
import type { DeployableBundle } from './bundle-reader';
import { newDeploymentId } from './deployment-id';
import { createDeploymentBody } from './dto/deployment-input';
import { resolveParallelism } from './parallelism';
import { bundleTopicViolations, configTopicViolations } from './topic-namespace';

const bundle: DeployableBundle = {
  id: 'b1',
  name: 'word-count',
  version: '1.0.0',
  key: 'k',
  sha256: 'f'.repeat(64),
  operatorIds: ['words', 'counts'],
  maxParallelism: 32,
  defaultParallelism: 2,
  topics: null,
};

describe('resolveParallelism', () => {
  it("defaults to the manifest's defaultParallelism", () => {
    expect(resolveParallelism(undefined, bundle, 'parallelism')).toEqual({ parallelism: { default: 2, operators: {} }, errors: [] });
  });

  it('keeps what a change does not name, and drops operators the bundle no longer has', () => {
    const base = { default: 1, operators: { counts: 4, gone: 3 } };
    expect(resolveParallelism({ operators: { words: 2 } }, bundle, 'parallelism', base).parallelism).toEqual({ default: 1, operators: { counts: 4, words: 2 } });
  });

  it('names unknown operators and parallelism above maxParallelism', () => {
    const { errors } = resolveParallelism({ default: 33, operators: { nope: 1, counts: 64 } }, bundle, 'parallelism');
    expect(errors.map((e) => e.name)).toEqual(['parallelism.default', 'parallelism.operators.nope', 'parallelism.operators.counts']);
    expect(errors[1].reason).toContain('operators: words, counts');
  });
});

describe('tenant topics', () => {
  it('accepts only topics under t.<tenantId>.', () => {
    const errors = configTopicViolations('t1', { in: 't.t1.in', bare: 't.t1.', other: 't.t2.out', demo: 'demo.page-views' });
    expect(errors.map((e) => e.name)).toEqual(['config.topics.bare', 'config.topics.other', 'config.topics.demo']);
  });

  it('checks topics a manifest declares, and cannot check those it does not', () => {
    expect(bundleTopicViolations('t1', ['t.t1.in', 'demo.out'], 'bundle')).toEqual([
      { in: 'body', name: 'bundle', reason: 'the bundle uses topic "demo.out", outside "t.t1."' },
    ]);
    expect(bundleTopicViolations('t1', null, 'bundle')).toEqual([]);
  });
});

describe('deployment input', () => {
  it('names the field of each problem', () => {
    const result = createDeploymentBody.safeParse({ name: 'ok', bundleId: 'b' + '0'.repeat(24), parallelism: { operators: { 'bad id!': 1 } } });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0].path).toEqual(['parallelism', 'operators', 'bad id!']);
  });
});

describe('newDeploymentId', () => {
  it('is a valid job id, ordered by creation time', () => {
    const a = newDeploymentId(1_000);
    const b = newDeploymentId(2_000);
    expect(a).toMatch(/^d[a-f0-9]{24}$/);
    expect(a < b).toBe(true);
  });
});
