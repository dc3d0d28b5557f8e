/**
 * The tenant quota lock (QuotaService.lockQuotas, FOR NO KEY UPDATE) against the real database: it still excludes a
 * second quota check of the same tenant, but not the KEY SHARE lock every foreign key to the tenant takes, so the
 * reconciler writes a deployment's transitions while an API request holds the tenant for its quota check. Locks
 * are probed with NOWAIT / lock_timeout: a held lock fails the probe at once, whatever the machine's load.
 */
import { randomBytes } from 'node:crypto';
import { createPool, withTenant, type Pool, type PoolClient } from '@weir/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaService } from '../../../apps/control-plane/src/tenancy/quota.service';
import { deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { api, insertBundle, waitForStatus, type Api } from './support';

describe('tenant quota lock', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  const quotas = new QuotaService();
  let pool: Pool;
  let tenant: TestTenant;
  let cp: RunningControlPlane;
  let client: Api;
  let bundleId: string;

  beforeAll(async () => {
    pool = createPool({ connectionString: config.WEIR_PG_URL, max: 4 });
    tenant = await createTestTenant(config);
    // Never run: the deployments here rest in SUSPENDED and CANCELLED.
    const code = Buffer.from('export default {};');
    bundleId = await insertBundle(config, tenant.tenantId, { code, sha256: randomBytes(32).toString('hex') });
    cp = await startControlPlane(config);
    client = api(() => cp.url, tenant.writeKey);
  });

  afterAll(async () => {
    await cp?.close();
    await tenant?.cleanup();
    await pool?.end();
    await deleteQueues(config);
  });

  /** Runs `probe` in another transaction while `holder` has taken the quota lock in this one. */
  async function whileLocked<T>(probe: () => Promise<T>): Promise<T> {
    let release!: () => void;
    let locked!: () => void;
    const held = new Promise<void>((resolve) => (locked = resolve));
    const holder = withTenant(pool, tenant.tenantId, async (c) => {
      await quotas.lockQuotas(c, tenant.tenantId);
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await held;
    try {
      return await probe();
    } finally {
      release();
      await holder;
    }
  }

  const inTenant = <T>(work: (c: PoolClient) => Promise<T>) => withTenant(pool, tenant.tenantId, work);

  it('a second quota check of the tenant waits for the first', async () => {
    const second = whileLocked(() =>
      inTenant(async (c) => {
        await c.query("SET LOCAL lock_timeout = '300ms'");
        return quotas.lockQuotas(c, tenant.tenantId);
      }),
    );
    await expect(second).rejects.toThrow(/lock timeout/);
  });

  it("a foreign key's KEY SHARE on the tenant does not wait for a quota check", async () => {
    const probed = await whileLocked(() =>
      inTenant(async (c) => (await c.query('SELECT 1 AS ok FROM tenants WHERE id = $1 FOR KEY SHARE NOWAIT', [tenant.tenantId])).rows),
    );
    expect(probed).toEqual([{ ok: 1 }]);
  });

  it('the reconciler moves a deployment while a quota check holds the tenant', async () => {
    const created = await client.post('/v1/deployments', { name: `lock-${randomBytes(3).toString('hex')}`, bundleId, desiredState: 'SUSPENDED' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await waitForStatus(client, id, 'SUSPENDED');
    const cancelled = await whileLocked(async () => {
      expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
      // Its transition row references the tenant: with FOR UPDATE as the quota lock, this waited for the release.
      return waitForStatus(client, id, 'CANCELLED', 20_000);
    });
    expect(cancelled.status).toBe('CANCELLED');
  });
});
