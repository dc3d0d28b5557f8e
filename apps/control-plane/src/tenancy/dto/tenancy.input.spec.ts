import { describe, expect, it } from 'vitest';
import { InvalidRequestProblem } from '../../problems/problem.exception';
import { parseInput } from '../../validation/parse-input';
import { patchTenantBodySchema } from './tenancy.input';

/** The 400's parameters for a patch body, or [] when it is valid. */
function rejected(body: unknown): { name: string; reason: string }[] {
  try {
    parseInput(patchTenantBodySchema, body, 'body');
    return [];
  } catch (err) {
    if (!(err instanceof InvalidRequestProblem)) throw err;
    return (err.errors ?? []).map((e) => ({ name: e.name, reason: e.reason }));
  }
}

describe('tenant patch body', () => {
  it('takes a name, any subset of quotas, or both', () => {
    expect(parseInput(patchTenantBodySchema, { name: ' Acme ' }, 'body')).toEqual({ name: 'Acme' });
    expect(parseInput(patchTenantBodySchema, { quotas: { maxDeployments: 0 } }, 'body')).toEqual({ quotas: { maxDeployments: 0 } });
    expect(rejected({ name: 'x', quotas: { maxTotalParallelism: 1_000_000, maxBundleBytes: 5 * 1024 ** 3 } })).toEqual([]);
  });

  it('refuses a patch that changes nothing, naming the body or its quotas', () => {
    expect(rejected({})).toEqual([{ name: '(root)', reason: 'must change name or quotas (or both)' }]);
    expect(rejected({ quotas: {} })).toEqual([{ name: 'quotas', reason: expect.stringContaining('at least one') }]);
  });

  it('names unknown fields, values out of the create bounds, and a body that is not an object', () => {
    expect(rejected({ name: 'x', id: 't1' }).map((e) => e.name)).toEqual(['id']);
    expect(rejected({ quotas: { maxDeployments: 5, maxSlots: 1 } }).map((e) => e.name)).toEqual(['quotas.maxSlots']);
    expect(rejected({ quotas: { maxDeployments: -1, maxTotalParallelism: 1.5, maxBundleBytes: 0 } }).map((e) => e.name).sort()).toEqual([
      'quotas.maxBundleBytes',
      'quotas.maxDeployments',
      'quotas.maxTotalParallelism',
    ]);
    expect(rejected({ quotas: { maxDeployments: 100_001 } })).toEqual([{ name: 'quotas.maxDeployments', reason: 'must be an integer from 0 to 100000' }]);
    expect(rejected({ name: '  ' }).map((e) => e.name)).toEqual(['name']);
    expect(rejected({ name: null }).map((e) => e.name)).toEqual(['name']);
    expect(rejected([]).map((e) => e.name)).toEqual(['(root)']);
  });
});
