import { describe, expect, it } from 'vitest';
import { checkDeployQuota, QuotaExceededProblem } from './quotas';

const quotas = { maxDeployments: 2, maxTotalParallelism: 10, maxBundleBytes: 1024 };

describe('checkDeployQuota', () => {
  it('admits a deploy that fits exactly', () => {
    expect(() => checkDeployQuota(quotas, { deployments: 1, totalParallelism: 6 }, { parallelism: 4 })).not.toThrow();
  });

  it('names the deployments quota and the current use', () => {
    try {
      checkDeployQuota(quotas, { deployments: 2, totalParallelism: 2 }, { parallelism: 1 });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(QuotaExceededProblem);
      expect((err as QuotaExceededProblem).status).toBe(409);
      expect((err as QuotaExceededProblem).detail).toBe('Quota maxDeployments exceeded: limit 2, in use 2, requested 1');
    }
  });

  it('counts parallelism, crediting what a rescale releases', () => {
    expect(() => checkDeployQuota(quotas, { deployments: 1, totalParallelism: 8 }, { parallelism: 3 })).toThrow(/maxTotalParallelism.*in use 8, requested 3/);
    expect(() =>
      checkDeployQuota(quotas, { deployments: 2, totalParallelism: 8 }, { parallelism: 6, releasedParallelism: 4, newDeployment: false }),
    ).not.toThrow();
  });
});
