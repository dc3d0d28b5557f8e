import { createPool, LANE_STALL_MS, TenantReads, type Pool } from '@weir/db';
import { Pool as PlainPool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from './support/control-plane';

const SETTING = { name: 'reads-probe', text: "SELECT current_setting('app.tenant_id', true) AS t, current_setting('transaction_read_only') AS ro, pg_backend_pid() AS pid" };

describe('TenantReads (tenant reads pipelined on a few connections)', () => {
  let pool: Pool;

  beforeAll(() => {
    pool = createPool({ connectionString: testConfig().WEIR_PG_URL, max: 4 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('gives every read its own tenant, read-only, when many share one connection', async () => {
    const reads = new TenantReads(pool, 1);
    const tenants = Array.from({ length: 50 }, (_, i) => `tenant-${i}`);
    const rows = (await Promise.all(tenants.map((t) => reads.read<{ t: string; ro: string; pid: number }>(t, SETTING)))).map((r) => r.rows[0]);
    expect(rows.map((r) => r.t)).toEqual(tenants);
    expect(new Set(rows.map((r) => r.ro))).toEqual(new Set(['on']));
    expect(new Set(rows.map((r) => r.pid)).size).toBe(1);
    // Nothing outlives a read: the connection is back in the pool, without the setting.
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.idleCount).toBe(pool.totalCount);
    expect((await pool.query<{ t: string | null }>("SELECT current_setting('app.tenant_id', true) AS t")).rows[0].t ?? '').toBe('');
  });

  it('fails only the read whose statement failed, even between others on the same connection', async () => {
    const reads = new TenantReads(pool, 1);
    const results = await Promise.allSettled([
      reads.read<{ t: string }>('t-a', SETTING),
      reads.read('t-b', { text: 'SELECT 1 / 0' }),
      reads.read('t-c', { text: 'CREATE TABLE sneaky_write (x int)' }),
      reads.read<{ t: string }>('t-d', SETTING),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    // A parameter pg cannot send fails its read alone, and the connection stays in use.
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const around = await Promise.allSettled([reads.read<{ pid: number }>('t-e', SETTING), reads.read('t-f', { text: 'SELECT $1::jsonb', values: [circular] }), reads.read<{ pid: number }>('t-g', SETTING)]);
    expect(around.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(new Set(around.flatMap((r) => (r.status === 'fulfilled' ? [r.value.rows[0].pid] : []))).size).toBe(1);
    expect(results[1]).toMatchObject({ reason: { code: '22012' } });
    expect(results[2]).toMatchObject({ reason: { code: '25006' } });
    expect(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.rows[0].t] : []))).toEqual(['t-a', 't-d']);
  });

  it('spreads concurrent reads over its lanes', async () => {
    const reads = new TenantReads(pool, 2);
    const slow = { text: "SELECT pg_sleep(0.05), current_setting('app.tenant_id') AS t, pg_backend_pid() AS pid" };
    const rows = (await Promise.all(['x', 'y', 'z', 'w'].map((t) => reads.read<{ t: string; pid: number }>(t, slow)))).map((r) => r.rows[0]);
    expect(rows.map((r) => r.t)).toEqual(['x', 'y', 'z', 'w']);
    expect(new Set(rows.map((r) => r.pid)).size).toBe(2);
  });

  it("does not queue a tenant's read behind another tenant's stalled one", async () => {
    const reads = new TenantReads(pool, 1);
    const slow = reads.read('t-slow', { text: 'SELECT pg_sleep(1) AS slept' });
    await new Promise((resolve) => setTimeout(resolve, 2 * LANE_STALL_MS));
    const order: string[] = [];
    const quick = reads.read<{ t: string }>('t-quick', SETTING).then((r) => order.push(r.rows[0].t));
    await Promise.all([slow.then(() => order.push('t-slow')), quick]);
    expect(order).toEqual(['t-quick', 't-slow']);
  });

  it('drops a connection whose backend was terminated and reads on a fresh one', async () => {
    const reads = new TenantReads(pool, 1);
    const slow = reads.read('t-k', { text: 'SELECT pg_sleep(5)' });
    // Handled from the start: if this test times out under load, the termination below must not surface as an
    // unhandled rejection that fails the whole run.
    slow.catch(() => undefined);
    const pid = await waitForSleepingBackend();
    // The application role may end its own backends.
    await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await expect(slow).rejects.toMatchObject({ code: '57P01' });
    const after = await reads.read<{ t: string; pid: number }>('t-l', SETTING);
    expect(after.rows[0].t).toBe('t-l');
    expect(after.rows[0].pid).not.toBe(pid);
  });

  it('works on a pool without pipelining, one connection per read', async () => {
    const plain = new PlainPool({ connectionString: testConfig().WEIR_PG_URL, max: 2 });
    try {
      const reads = new TenantReads(plain, 1);
      const rows = await Promise.all(['p-1', 'p-2', 'p-3'].map((t) => reads.read<{ t: string }>(t, SETTING)));
      expect(rows.map((r) => r.rows[0].t)).toEqual(['p-1', 'p-2', 'p-3']);
    } finally {
      await plain.end();
    }
  });

  async function waitForSleepingBackend(): Promise<number> {
    for (let i = 0; i < 100; i++) {
      const { rows } = await pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE usename = current_user AND query = 'SELECT pg_sleep(5)' AND state = 'active'",
      );
      if (rows.length) return rows[0].pid;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the sleeping read never showed up in pg_stat_activity');
  }
});
