import { describe, expect, it } from 'vitest';
import { workerCommandSchema, type WorkerCommand } from './commands';

describe('run-subtasks config (deployment-time parameters)', () => {
  const run: WorkerCommand = {
    v: 1,
    type: 'run-subtasks',
    idempotencyKey: 'deploy-1-run-1',
    issuedAt: 1,
    tenantId: 't1',
    jobId: 'j1',
    bundle: { key: 'tenants/t1/bundles/b1.js', sha256: 'a'.repeat(64) },
    maxParallelism: 128,
    subtasks: [{ operatorId: 'count', subtask: 0, keyGroups: [[0, 127]] }],
    config: { topics: { transactions: 't.t1.transactions', 'rule-acks': 't.t1.rule-acks' }, properties: { 'max-window-ms': '60000' } },
  };

  it('carries topics by logical name and properties', () => {
    expect(workerCommandSchema.parse(run)).toEqual(run);
    const { config: _config, ...withoutConfig } = run as Extract<WorkerCommand, { type: 'run-subtasks' }>;
    expect(workerCommandSchema.safeParse(withoutConfig).success).toBe(true);
  });

  it('refuses what is not a topic map or a property map, naming the place', () => {
    const badTopic = workerCommandSchema.safeParse({ ...run, config: { topics: { out: 'has space' } } });
    expect(badTopic.error?.issues[0].path).toEqual(['config', 'topics', 'out']);
    const badName = workerCommandSchema.safeParse({ ...run, config: { topics: { 'a.b': 't.t1.x' } } });
    expect(badName.success).toBe(false);
    const badProperty = workerCommandSchema.safeParse({ ...run, config: { properties: { n: 5 } } });
    expect(badProperty.error?.issues[0].path).toEqual(['config', 'properties', 'n']);
    expect(workerCommandSchema.safeParse({ ...run, config: { extra: {} } }).success).toBe(false);
  });
});
