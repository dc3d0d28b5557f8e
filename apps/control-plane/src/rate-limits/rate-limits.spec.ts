import type { WeirConfig } from '@weir/config';
import { RateLimiterMemory, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import { toProblem } from '../problems/to-problem';
import { BURST_WINDOW_SEC, describeLimit, RateLimitedProblem, RateLimits, rateLimitSettingsOf, retryAfterSeconds, type LimiterFactory, type LimitScope } from './rate-limits';

const memory: LimiterFactory = (_scope, _window, points, duration) => new RateLimiterMemory({ points, duration });

function recorder() {
  const seen = { limited: [] as LimitScope[], unchecked: [] as string[], recovered: 0 };
  return {
    seen,
    events: {
      limited: (scope: LimitScope) => void seen.limited.push(scope),
      unchecked: (err: Error) => void seen.unchecked.push(err.message),
      recovered: () => void seen.recovered++,
    },
  };
}

const alice = { keyId: 'k-alice', tenantId: 't-one' };
const bob = { keyId: 'k-bob', tenantId: 't-one' };
const carol = { keyId: 'k-carol', tenantId: 't-two' };

async function admitted(limits: RateLimits, principal: typeof alice, times: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < times; i++) {
    try {
      await limits.admit(principal);
      ok++;
    } catch (err) {
      if (!(err instanceof RateLimitedProblem)) throw err;
    }
  }
  return ok;
}

describe('rateLimitSettingsOf', () => {
  it('turns a limit off at a rate of 0', () => {
    const config = { WEIR_RATE_LIMIT_KEY_PER_SEC: 0, WEIR_RATE_LIMIT_KEY_BURST: 5, WEIR_RATE_LIMIT_TENANT_PER_SEC: 20, WEIR_RATE_LIMIT_TENANT_BURST: 0 } as WeirConfig;
    expect(rateLimitSettingsOf(config)).toEqual({ key: null, tenant: { perSec: 20, burst: 0 } });
  });
});

describe('RateLimits', () => {
  it("refuses a key past its rate with a 429 that names the key's limit and when to retry", async () => {
    const { seen, events } = recorder();
    const limits = new RateLimits({ key: { perSec: 3, burst: 0 }, tenant: null }, memory, events);
    expect(await admitted(limits, alice, 3)).toBe(3);
    const refusal = await limits.admit(alice).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(RateLimitedProblem);
    const problem = refusal as RateLimitedProblem;
    expect(problem.status).toBe(429);
    expect(problem.scope).toBe('key');
    expect(problem.detail).toBe(`API key k-alice is over its rate limit of 3 requests/s. Retry after ${problem.retryAfterSec} s.`);
    expect(problem.retryAfterSec).toBe(1);
    expect(problem.headers).toEqual({ 'Retry-After': '1' });
    expect(seen.limited).toEqual(['key']);
    // Another key is counted on its own.
    await expect(limits.admit(carol)).resolves.toBeUndefined();
  });

  it("counts every key of a tenant against the tenant's limit, and names that limit", async () => {
    const limits = new RateLimits({ key: { perSec: 10, burst: 0 }, tenant: { perSec: 4, burst: 0 } }, memory, recorder().events);
    expect(await admitted(limits, alice, 2)).toBe(2);
    expect(await admitted(limits, bob, 2)).toBe(2);
    const refusal = (await limits.admit(bob).catch((err: unknown) => err)) as RateLimitedProblem;
    expect(refusal.scope).toBe('tenant');
    expect(refusal.detail).toMatch(/^Tenant t-one is over its rate limit of 4 requests\/s, counted over all its API keys\. Retry after \d+ s\.$/);
    // Another tenant is not held back by this one.
    expect(await admitted(limits, carol, 4)).toBe(4);
  });

  it('lets a burst above the rate through, up to the burst, and says so in the message', async () => {
    const limits = new RateLimits({ key: { perSec: 2, burst: 3 }, tenant: null }, memory, recorder().events);
    expect(await admitted(limits, alice, 10)).toBe(5);
    const refusal = (await limits.admit(alice).catch((err: unknown) => err)) as RateLimitedProblem;
    expect(refusal.detail).toContain(`2 requests/s (and a burst of 3 more per ${BURST_WINDOW_SEC} s)`);
    expect(refusal.retryAfterSec).toBeGreaterThanOrEqual(1);
  });

  it('names the key when both limits are over', async () => {
    const limits = new RateLimits({ key: { perSec: 1, burst: 0 }, tenant: { perSec: 1, burst: 0 } }, memory, recorder().events);
    await limits.admit(alice);
    await expect(limits.admit(alice)).rejects.toMatchObject({ scope: 'key' });
  });

  it('fails open when the counters cannot be reached, and says when they answer again', async () => {
    let down = true;
    const flaky: LimiterFactory = (scope, window, points, duration) => {
      const real = new RateLimiterMemory({ points, duration });
      return { consume: (key: string) => (down ? Promise.reject(new Error('Redis connection is not ready')) : real.consume(key)) } as unknown as RateLimiterAbstract;
    };
    const { seen, events } = recorder();
    const limits = new RateLimits({ key: { perSec: 1, burst: 0 }, tenant: { perSec: 1, burst: 0 } }, flaky, events);
    expect(await admitted(limits, alice, 5)).toBe(5);
    expect(seen.unchecked).toEqual(Array(5).fill('Redis connection is not ready'));
    down = false;
    await limits.admit(alice);
    expect(seen.recovered).toBe(1);
    await expect(limits.admit(alice)).rejects.toBeInstanceOf(RateLimitedProblem);
  });

  it('touches no counter when both limits are off', async () => {
    const untouchable: LimiterFactory = () => {
      throw new Error('no limiter should be built');
    };
    const limits = new RateLimits({ key: null, tenant: null }, untouchable, recorder().events);
    expect(limits.enabled).toBe(false);
    await expect(limits.admit(alice)).resolves.toBeUndefined();
  });
});

describe('the 429 problem', () => {
  it('leaves with its Retry-After header and a problem body', () => {
    const mapped = toProblem(new RateLimitedProblem('tenant', { perSec: 50, burst: 0 }, 2, alice), '/v1/slos', 'req-1');
    expect(mapped.headers).toEqual({ 'Retry-After': '2' });
    expect(mapped.problem).toMatchObject({ status: 429, type: 'urn:weir:problem:rate-limited', title: 'Too Many Requests', instance: '/v1/slos', requestId: 'req-1' });
    expect(mapped.unexpected).toBe(false);
  });

  it('rounds Retry-After up to whole seconds, never below 1', () => {
    expect([0, 1, 999, 1000, 1001, 9500].map(retryAfterSeconds)).toEqual([1, 1, 1, 1, 2, 10]);
    expect(describeLimit({ perSec: 100, burst: 0 })).toBe('100 requests/s');
  });
});
