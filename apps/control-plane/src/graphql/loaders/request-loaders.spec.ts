import { describe, expect, it } from 'vitest';
import type { MetricsStore } from '../../metrics/metrics-store';
import type { KeyGroupMovesService } from '../../moves/key-group-moves.service';
import type { ScalingDecisionsService } from '../../partitioner/scaling-decisions.service';
import { NotFoundProblem } from '../../problems/problem.exception';
import type { ScalingPolicyService } from '../../scaling-policy/scaling-policy.service';
import type { SlosService } from '../../slos/slos.service';
import type { DeploymentKey } from './load-grouped';
import { RequestLoadersFactory } from './request-loaders';

const key = (tenantId: string, deploymentId: string): DeploymentKey => ({ tenantId, deploymentId });

describe('RequestLoadersFactory', () => {
  function factory() {
    const slosCalls: (readonly string[])[] = [];
    const slos = {
      listByDeployment: async (_tenantId: string, ids: readonly string[]) => {
        slosCalls.push(ids);
        return new Map(ids.map((id) => [id, []]));
      },
    } as unknown as SlosService;
    const policies = { getByDeployment: async () => new Map() } as unknown as ScalingPolicyService;
    const metrics = { readLatestOf: async (_tenantId: string, ids: readonly string[]) => ids.map((id) => (id === 'a' ? '{"m":1}' : null)) } as unknown as MetricsStore;
    const loaders = new RequestLoadersFactory(metrics, slos, policies, {} as KeyGroupMovesService, {} as ScalingDecisionsService).create();
    return { loaders, slosCalls };
  }

  it('batches the loads of one tick into one read, and memoizes nothing across ticks', async () => {
    const { loaders, slosCalls } = factory();
    await Promise.all(['a', 'b', 'c'].map((id) => loaders.slos.load(key('t1', id))));
    expect(slosCalls).toEqual([['a', 'b', 'c']]);
    await loaders.slos.load(key('t1', 'a'));
    expect(slosCalls).toEqual([['a', 'b', 'c'], ['a']]);
  });

  it('answers null metrics where none are stored, and NOT_FOUND for a policy of a deployment the tenant lacks', async () => {
    const { loaders } = factory();
    expect(await Promise.all([loaders.latestMetrics.load(key('t1', 'a')), loaders.latestMetrics.load(key('t1', 'b'))])).toEqual(['{"m":1}', null]);
    await expect(loaders.scalingPolicy.load(key('t1', 'gone'))).rejects.toBeInstanceOf(NotFoundProblem);
  });
});
