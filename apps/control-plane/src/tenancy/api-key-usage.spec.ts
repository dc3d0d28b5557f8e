import type { WeirConfig } from '@weir/config';
import type { Pool } from '@weir/db';
import type { Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyUsage } from './api-key-usage';

type Written = { keyId: string; tenantId: string; usedAt: number }[];

/** A pool whose one statement records the arrays it was given; it can be made to fail or be held until released. */
function fakePool() {
  const flushes: Written[] = [];
  let failing = false;
  let gate: Promise<void> | undefined;
  const pool = {
    query: async (_sql: string, [keyIds, tenantIds, usedAt]: [string[], string[], Date[]]) => {
      await gate;
      if (failing) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
      flushes.push(keyIds.map((keyId, i) => ({ keyId, tenantId: tenantIds[i], usedAt: usedAt[i].getTime() })));
      return { rows: [] };
    },
  };
  return {
    pool: pool as unknown as Pool,
    flushes,
    fail: (value: boolean) => (failing = value),
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

function fakeLogger() {
  const warnings: string[] = [];
  const logger = { warn: (_fields: unknown, message: string) => void warnings.push(message) };
  return { logger: logger as unknown as Logger, warnings };
}

const options = (apiKeyUsageFlushIntervalMs?: number) => ({ config: {} as WeirConfig, apiKeyUsageFlushIntervalMs });

class SmallApiKeyUsage extends ApiKeyUsage {
  protected override readonly maxPending = 2;
}

describe('ApiKeyUsage', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the latest use of each key in one statement, and nothing when nothing was noted', async () => {
    const db = fakePool();
    const usage = new ApiKeyUsage(db.pool, options(), fakeLogger().logger);
    await usage.flush();
    expect(db.flushes).toHaveLength(0);

    usage.note('k1', 't1', 2_000);
    usage.note('k1', 't1', 1_000);
    usage.note('k2', 't2', 1_500);
    usage.note('k1', 't1', 3_000);
    await usage.flush();
    expect(db.flushes).toEqual([
      [
        { keyId: 'k1', tenantId: 't1', usedAt: 3_000 },
        { keyId: 'k2', tenantId: 't2', usedAt: 1_500 },
      ],
    ]);
    await usage.flush();
    expect(db.flushes).toHaveLength(1);
  });

  it('keeps the uses of a failed flush for the next one, merged with later uses, and warns', async () => {
    const db = fakePool();
    const log = fakeLogger();
    const usage = new ApiKeyUsage(db.pool, options(), log.logger);
    usage.note('k1', 't1', 5_000);
    usage.note('k2', 't1', 5_000);
    db.fail(true);
    await usage.flush();
    expect(log.warnings).toEqual(['recording API key uses failed; they are kept for the next flush']);

    usage.note('k1', 't1', 6_000);
    usage.note('k2', 't1', 4_000);
    db.fail(false);
    await usage.flush();
    expect(db.flushes).toEqual([
      [
        { keyId: 'k1', tenantId: 't1', usedAt: 6_000 },
        { keyId: 'k2', tenantId: 't1', usedAt: 5_000 },
      ],
    ]);
  });

  it('caps the keys waiting for a flush: further keys are dropped with a warning, known keys still move on', async () => {
    const db = fakePool();
    const log = fakeLogger();
    const usage = new SmallApiKeyUsage(db.pool, options(), log.logger);
    usage.note('k1', 't1', 1_000);
    usage.note('k2', 't1', 1_000);
    usage.note('k3', 't1', 1_000);
    usage.note('k4', 't1', 1_000);
    usage.note('k1', 't1', 2_000);
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toMatch(/too many API keys/);

    await usage.flush();
    expect(log.warnings[1]).toMatch(/dropped since the last flush/);
    expect(db.flushes[0].map((u) => [u.keyId, u.usedAt])).toEqual([
      ['k1', 2_000],
      ['k2', 1_000],
    ]);
    // Room again after the flush.
    usage.note('k3', 't1', 3_000);
    await usage.flush();
    expect(db.flushes[1].map((u) => u.keyId)).toEqual(['k3']);
    expect(log.warnings).toHaveLength(2);
  });

  it('leaves uses noted during a running flush to the next one, and flushes them on shutdown', async () => {
    const db = fakePool();
    const usage = new ApiKeyUsage(db.pool, options(), fakeLogger().logger);
    usage.note('k1', 't1', 1_000);
    const release = db.hold();
    const first = usage.flush();
    usage.note('k2', 't1', 2_000);
    // A flush due while one runs is that same flush.
    expect(usage.flush()).toBe(first);
    release();
    await first;
    expect(db.flushes.map((f) => f.map((u) => u.keyId))).toEqual([['k1']]);

    await usage.onModuleDestroy();
    expect(db.flushes.map((f) => f.map((u) => u.keyId))).toEqual([['k1'], ['k2']]);
  });

  it('flushes every interval once bootstrapped', async () => {
    vi.useFakeTimers();
    const db = fakePool();
    const usage = new ApiKeyUsage(db.pool, options(1_000), fakeLogger().logger);
    usage.onApplicationBootstrap();
    usage.note('k1', 't1', 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(db.flushes).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(db.flushes).toHaveLength(1);
    usage.note('k1', 't1', 2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(db.flushes).toHaveLength(2);
    await usage.onModuleDestroy();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(db.flushes).toHaveLength(2);
  });
});
