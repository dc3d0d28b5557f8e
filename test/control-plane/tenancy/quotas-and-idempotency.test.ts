import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyKeyInProgressProblem, IdempotencyKeyReusedProblem, IdempotencyService } from '../../../apps/control-plane/src/idempotency';
import { QuotaExceededProblem, QuotaService, TenantDb } from '../../../apps/control-plane/src/tenancy';
import { startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });

describe('quotas and idempotency against Postgres', () => {
  let cp: RunningControlPlane;
  let app: INestApplication;
  let tenant: TestTenant;

  beforeAll(async () => {
    cp = await startControlPlane(config);
    app = cp.app;
    tenant = await createTestTenant(config, { maxDeployments: 3, maxTotalParallelism: 8, maxBundleBytes: 4096 });
  });
  afterAll(async () => {
    await cp?.close();
    await tenant?.cleanup();
  });

  it("reads the tenant's quotas through RLS, and another tenant's as missing", async () => {
    const db = app.get(TenantDb);
    const quotas = app.get(QuotaService);
    expect(await db.run(tenant.tenantId, (c) => quotas.quotasOf(c, tenant.tenantId))).toEqual({
      maxDeployments: 3,
      maxTotalParallelism: 8,
      maxBundleBytes: 4096,
    });
    const other = await createTestTenant(config);
    try {
      await expect(db.run(tenant.tenantId, (c) => quotas.quotasOf(c, other.tenantId))).rejects.toMatchObject({ status: 404 });
    } finally {
      await other.cleanup();
    }
  });

  it('serialises concurrent deploys of one tenant on its row, so only what fits passes', async () => {
    const db = app.get(TenantDb);
    const quotas = app.get(QuotaService);
    // Usage as the deployments module would count it, kept in this test: each admitted deploy adds its parallelism.
    let used = 0;
    const deploy = (parallelism: number) =>
      db.run(tenant.tenantId, async (client) => {
        await quotas.assertCanDeploy(client, tenant.tenantId, { parallelism }, async () => ({ deployments: used > 0 ? 1 : 0, totalParallelism: used }));
        await new Promise((r) => setTimeout(r, 20)); // hold the lock while "writing the deployment"
        used += parallelism;
      });
    const results = await Promise.allSettled([deploy(5), deploy(5)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(QuotaExceededProblem);
    expect((refused.reason as QuotaExceededProblem).detail).toBe('Quota maxTotalParallelism exceeded: limit 8, in use 5, requested 5');
  });

  it('lets one request hold a key: a concurrent repeat is 409, another body 422, a release frees the key', async () => {
    const idem = app.get(IdempotencyService);
    const key = randomBytes(8).toString('hex');
    const first = await idem.begin(tenant.tenantId, key, 'fp-1');
    expect(first.kind).toBe('new');
    await expect(idem.begin(tenant.tenantId, key, 'fp-1')).rejects.toBeInstanceOf(IdempotencyKeyInProgressProblem);
    await expect(idem.begin(tenant.tenantId, key, 'fp-2')).rejects.toBeInstanceOf(IdempotencyKeyReusedProblem);
    if (first.kind !== 'new') throw new Error('unreachable');
    await first.release();
    const again = await idem.begin(tenant.tenantId, key, 'fp-2');
    expect(again.kind).toBe('new');
    if (again.kind !== 'new') throw new Error('unreachable');
    await again.complete(201, { id: 'x', at: new Date(0) });
    expect(await idem.begin(tenant.tenantId, key, 'fp-2')).toEqual({ kind: 'replay', statusCode: 201, body: { id: 'x', at: '1970-01-01T00:00:00.000Z' } });
  });
});
