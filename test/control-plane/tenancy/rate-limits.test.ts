import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminHeaders,
  capturingLog,
  deleteQueues,
  eventually,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type ProblemBody,
  type RunningControlPlane,
} from '../support/control-plane';
import { ApiRateLimiter } from '../../../apps/control-plane/src/rate-limits';
import { createTestTenant, type TestTenant } from '../support/tenants';

// Small limits, so a few sequential requests are over them within one second; the other tests run with the defaults.
const config = testConfig({
  WEIR_QUEUE_PREFIX: uniquePrefix(),
  WEIR_RATE_LIMIT_KEY_PER_SEC: '3',
  WEIR_RATE_LIMIT_KEY_BURST: '0',
  WEIR_RATE_LIMIT_TENANT_PER_SEC: '5',
  WEIR_RATE_LIMIT_TENANT_BURST: '0',
});
/** Enough requests to pass a limit of 3 or 5 per second many times over, however slow the machine. */
const MAX_TRIES = 200;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const keyIdOf = (key: string) => key.split('_')[1];

describe('API rate limits, with two control planes on one Redis', () => {
  let one: RunningControlPlane;
  let two: RunningControlPlane;
  const twoLog = capturingLog();
  const tenants: TestTenant[] = [];
  const tenant = async () => {
    const t = await createTestTenant(config);
    tenants.push(t);
    return t;
  };

  beforeAll(async () => {
    [one, two] = await Promise.all([startControlPlane(config), startControlPlane(config, { logDestination: twoLog.destination })]);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await Promise.all(tenants.map((t) => t.cleanup()));
    await deleteQueues(config);
  });

  /** Sends `send()` until it is answered 429 (or MAX_TRIES), returning that answer. */
  async function untilRefused(send: () => Promise<Response>): Promise<Response> {
    for (let i = 0; i < MAX_TRIES; i++) {
      const res = await send();
      if (res.status === 429) return res;
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    throw new Error(`no 429 in ${MAX_TRIES} requests`);
  }

  async function expectRateLimited(res: Response, pattern: RegExp): Promise<ProblemBody> {
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const retryAfter = res.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    const body = (await res.json()) as ProblemBody;
    expect(body).toMatchObject({ type: 'urn:weir:problem:rate-limited', title: 'Too Many Requests', status: 429 });
    expect(body.detail).toMatch(pattern);
    expect(body.detail).toContain(`Retry after ${retryAfter} s.`);
    return body;
  }

  it("refuses a key over its limit with 429, Retry-After and a problem naming the key's limit, and serves another tenant", async () => {
    const [a, b] = await Promise.all([tenant(), tenant()]);
    const refused = await untilRefused(() => fetch(`${one.url}/v1/tenant`, { headers: bearer(a.readKey) }));
    const body = await expectRateLimited(refused, /^API key \w+ is over its rate limit of 3 requests\/s\. Retry after \d+ s\.$/);
    expect(body.detail).toContain(keyIdOf(a.readKey));
    expect(body.instance).toBe('/v1/tenant');
    // Another tenant's key, at once, on the same instance: its own limits, untouched.
    const other = await fetch(`${one.url}/v1/tenant`, { headers: bearer(b.readKey) });
    expect(other.status).toBe(200);
    expect(((await other.json()) as { id: string }).id).toBe(b.tenantId);
  });

  it('counts GraphQL HTTP requests too, answered with the same 429 problem', async () => {
    const a = await tenant();
    const query = () =>
      fetch(`${one.url}/graphql`, {
        method: 'POST',
        headers: { ...bearer(a.readKey), 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ tenant { id } }' }),
      });
    const body = await expectRateLimited(await untilRefused(query), /^API key \w+ is over its rate limit of 3 requests\/s/);
    expect(body.instance).toBe('/graphql');
  });

  it("refuses a tenant whose keys together are over the tenant's limit, naming the tenant's limit", async () => {
    const a = await tenant();
    // Alternating between the tenant's two keys: each stays under 3/s while together they pass 5/s.
    let turn = 0;
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const refused = await untilRefused(() => fetch(`${one.url}/v1/tenant`, { headers: bearer(turn++ % 2 ? a.writeKey : a.readKey) }));
      const body = (await refused.json()) as ProblemBody;
      // A key's own window may close later than the tenant's; try again until the tenant's limit is the one hit.
      if (body.detail.startsWith('Tenant')) {
        expect(body.detail).toMatch(new RegExp(`^Tenant ${a.tenantId} is over its rate limit of 5 requests/s, counted over all its API keys\\. Retry after \\d+ s\\.$`));
        expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
        return;
      }
    }
    throw new Error('the tenant limit was never the one refusing');
  });

  it('holds across instances: a key refused on one is refused on the other, which never counted it', async () => {
    const a = await tenant();
    // Counted in memory per instance, `two` would serve the key: it has never seen it. Counted in Redis, it refuses.
    // (If the one-second window ends between the two requests, `two` serves it; try again.)
    let refusedOnTwo: Response | undefined;
    for (let attempt = 0; attempt < 20 && !refusedOnTwo; attempt++) {
      await untilRefused(() => fetch(`${one.url}/v1/tenant`, { headers: bearer(a.readKey) }));
      const res = await fetch(`${two.url}/v1/tenant`, { headers: bearer(a.readKey) });
      if (res.status === 429) refusedOnTwo = res;
      else await res.arrayBuffer();
    }
    expect(refusedOnTwo, 'instance two refused the key exhausted on instance one').toBeDefined();
    await expectRateLimited(refusedOnTwo!, /^API key \w+ is over its rate limit of 3 requests\/s/);
  });

  it('holds across instances with requests split between them', async () => {
    const a = await tenant();
    const refusedBy = new Set<string>();
    let i = 0;
    while (refusedBy.size < 2 && i < MAX_TRIES) {
      const cp = i++ % 2 ? two : one;
      const res = await fetch(`${cp.url}/v1/tenant`, { headers: bearer(a.readKey) });
      if (res.status === 429) {
        await expectRateLimited(res, /^API key \w+ is over its rate limit of 3 requests\/s/);
        refusedBy.add(cp.url);
      } else {
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    }
    expect(refusedBy).toEqual(new Set([one.url, two.url]));
  });

  it('serves /metrics only with the platform admin token', async () => {
    const a = await tenant();
    const none = await fetch(`${one.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="weir"');
    const tenantKey = await fetch(`${one.url}/metrics`, { headers: bearer(a.writeKey) });
    expect(tenantKey.status).toBe(401);
    const admin = await fetch(`${one.url}/metrics`, { headers: adminHeaders() });
    expect(admin.status).toBe(200);
    const text = await admin.text();
    expect(text).toContain('weir_control_plane_process_cpu_seconds_total');
    // The refusals of the tests above, by limit; no tenant or key id as a label.
    expect(text).toMatch(/weir_control_plane_rate_limited_total\{limit="key"\} [1-9]\d*/);
    expect(text).not.toContain(a.tenantId);
  });

  // Last: it takes instance two's limiter off Redis for good.
  it("fails open when the limiter's Redis is gone: requests are served, a warning is logged", async () => {
    const a = await tenant();
    // The limiter's own connection, closed without reconnecting: every check now fails at once, as during an outage.
    (two.app.get(ApiRateLimiter) as unknown as { redis: { disconnect(): void } }).redis.disconnect();
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${two.url}/v1/tenant`, { headers: bearer(a.readKey) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const warning = await eventually('the fail-open warning', async () => twoLog.lines().find((l) => String(l.msg).startsWith('rate limits not checked')));
    expect(warning.level).toBe(40);
    // Instance one still counts in Redis and refuses the same key.
    await expectRateLimited(await untilRefused(() => fetch(`${one.url}/v1/tenant`, { headers: bearer(a.readKey) })), /^API key \w+ is over its rate limit/);
  });
});
