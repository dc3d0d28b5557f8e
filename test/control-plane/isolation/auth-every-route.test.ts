/**
 * Authentication over every route the server answers, generated from the running app's own route table (what
 * Fastify registered, each route with the decision its handler's metadata gives: tenancy/route-table.ts), never
 * from a hand-written list. Every guarded route is called with no credential, a bad one, the wrong kind (a tenant
 * key on an admin route, the admin token on a tenant route), the wrong scope and another tenant's key, each in its
 * plain spelling and in the spellings a router may decode or normalise: percent-encoded characters, a trailing slash,
 * double slashes, `%2F`, dot segments, another case. The plain spelling's refusal must come back every time, or
 * a 404 where the router does not match that spelling at all; never a success, never a 5xx. The percent-encoded
 * and trailing-slash spellings decode to the plain path, so for them only the plain refusal will do.
 *
 * A route added without a decision stops the app from starting (so every test here fails with its name), and one
 * added with a decision is called here the day it is added. The checked-in OpenAPI document must agree with what the
 * server did.
 */
import { Agent, request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../../apps/control-plane/src/tenancy/api-key-format';
import { routeTable, type RouteEntry } from '../../../apps/control-plane/src/tenancy';
import { insertDeployment } from '../graphql/support';
import { deleteQueues, startControlPlane, testConfig, TEST_ADMIN_TOKEN, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

interface Answer {
  readonly status: number;
  readonly type?: string;
  readonly challenged: boolean;
  readonly body: string;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 8 });

/** One request exactly as spelled: node:http sends the path as given (fetch's URL parser would normalise it). */
function send(base: URL, method: string, path: string, authorization?: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (authorization) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = httpRequest({ host: base.hostname, port: base.port, method, path, headers, agent: keepAlive }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let type: string | undefined;
        try {
          type = (JSON.parse(text) as { type?: string }).type;
        } catch {
          type = undefined;
        }
        resolve({ status: res.statusCode ?? 0, type, challenged: res.headers['www-authenticate'] !== undefined, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

const hex = (c: string, lower: boolean) => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return `%${lower ? h.toLowerCase() : h.toUpperCase()}`;
};

interface Spelling {
  readonly name: string;
  readonly path: string;
  /** Decodes to the plain path: the plain refusal, not a 404, is the only right answer. */
  readonly same: boolean;
}

/**
 * Spellings of a concrete path. `statics[i]` says whether segment i is a literal of the route (not a parameter).
 * Encodings of reserved characters (`%2F`) and dot segments must not be decoded into another path's structure.
 */
function spellingsOf(path: string, statics: readonly boolean[]): Spelling[] {
  const segments = path.split('/').slice(1);
  const join = (parts: readonly string[]) => `/${parts.join('/')}`;
  const encodeSegment = (s: string, lower: boolean) => [...s].map((c) => hex(c, lower)).join('');
  const firstEncoded = (s: string) => hex(s[0], false) + s.slice(1);
  const [head, ...rest] = segments;
  const out: Spelling[] = [
    { name: 'plain', path, same: true },
    { name: 'first character encoded', path: join([firstEncoded(head), ...rest]), same: true },
    { name: 'second character encoded', path: join([head[0] + hex(head[1] ?? 'x', false) + head.slice(2), ...rest]), same: true },
    { name: 'every literal character encoded', path: join(segments.map((s, i) => (statics[i] ? encodeSegment(s, false) : s))), same: true },
    { name: 'every literal character encoded, lower-case hex', path: join(segments.map((s, i) => (statics[i] ? encodeSegment(s, true) : s))), same: true },
    { name: 'parameters encoded', path: join(segments.map((s, i) => (statics[i] ? s : encodeSegment(s, true)))), same: true },
    { name: 'trailing slash', path: `${path}/`, same: true },
    { name: 'trailing double slash', path: `${path}//`, same: false },
    { name: 'leading double slash', path: `/${path}`, same: false },
    { name: 'upper case', path: join(segments.map((s, i) => (statics[i] ? s.toUpperCase() : s))), same: false },
    { name: 'upper case, encoded', path: join([encodeSegment(head.toUpperCase(), false), ...rest]), same: false },
  ];
  if (rest.length > 0) {
    const tail = rest.join('/');
    out.push(
      { name: 'double slash', path: `/${head}//${tail}`, same: false },
      { name: '%2F for a slash', path: `/${head}%2F${tail}`, same: false },
      { name: '%2f for a slash', path: `/${head}%2f${tail}`, same: false },
      { name: '%5C (backslash) for a slash', path: `/${head}%5C${tail}`, same: false },
      { name: 'dot segment', path: `/${head}/./${tail}`, same: false },
      { name: 'encoded dot segment', path: `/${head}/%2e/${tail}`, same: false },
      { name: 'dot-dot segment', path: `/${head}/x/../${tail}`, same: false },
      { name: 'encoded dot-dot segment', path: `/${head}/x/%2E%2E/${tail}`, same: false },
      { name: 'encoded dot-dot and slash', path: `/${head}/x%2F%2e%2e%2F${tail}`, same: false },
      { name: 'semicolon parameter', path: `/${head};x=1/${tail}`, same: false },
    );
  }
  return out;
}

const openapi = JSON.parse(readFileSync(join(__dirname, '../../../openapi/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { security?: Record<string, string[]>[]; 'x-weir-scope'?: string }>>;
};

describe('authentication of every route, in every spelling', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  let cp: RunningControlPlane;
  let base: URL;
  let table: RouteEntry[];
  let a: TestTenant;
  let b: TestTenant;
  let revokedKey: string;
  let rulesKey: string;
  const ids = { deployment: `d${randomBytes(12).toString('hex')}`, bundle: '', bundleName: '', slo: '', apiKey: '' };

  const asA = (method: string, path: string, body?: unknown) =>
    fetch(`${cp.url}${path}`, { method, headers: { authorization: `Bearer ${a.writeKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  beforeAll(async () => {
    cp = await startControlPlane(config);
    base = new URL(cp.url);
    table = routeTable(cp.app);
    [a, b] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
    ids.bundle = (await insertDeployment(config, a.tenantId, ids.deployment)).bundleId;
    ids.bundleName = ((await (await asA('GET', `/v1/bundles/${ids.bundle}`)).json()) as { name: string }).name;
    const slo = await asA('POST', '/v1/slos', { name: 'auth test', deploymentId: ids.deployment, percentile: 'p99', thresholdMs: 100, target: 0.9, windowMinutes: 10 });
    expect(slo.status).toBe(201);
    ids.slo = ((await slo.json()) as { id: string }).id;
    ids.apiKey = ((await (await asA('GET', '/v1/api-keys')).json()) as { items: { id: string }[] }).items[0].id;
    const revoked = (await (await asA('POST', '/v1/api-keys', { name: 'revoked', scope: 'write' })).json()) as { id: string; key: string };
    expect((await asA('DELETE', `/v1/api-keys/${revoked.id}`)).status).toBe(204);
    revokedKey = revoked.key;
    const rules = await asA('POST', '/v1/api-keys', { name: 'rules only', scope: 'rules' });
    expect(rules.status).toBe(201);
    rulesKey = ((await rules.json()) as { key: string }).key;
  });

  afterAll(async () => {
    await cp?.close();
    keepAlive.destroy();
    await Promise.allSettled([a?.cleanup(), b?.cleanup()]);
    await deleteQueues(config);
  });

  /** Tenant A's ids for a route's parameters, so "another tenant" aims at real resources of A. */
  function concrete(route: RouteEntry): string {
    return route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
      if (route.path.startsWith('/v1/tenants/')) return a.tenantId;
      if (route.path.startsWith('/v1/workers/')) return 'w-unknown';
      if (name === 'rolloutId') return `ro_${'0'.repeat(20)}`;
      if (name === 'savepointId') return 'sp1';
      if (name === 'version') return route.path.startsWith('/v1/bundles/') ? '1.0.0' : '1';
      if (name === 'name') return ids.bundleName;
      if (route.path.startsWith('/v1/deployments/')) return ids.deployment;
      if (route.path.startsWith('/v1/bundles/')) return ids.bundle;
      if (route.path.startsWith('/v1/slos/')) return ids.slo;
      if (route.path.startsWith('/v1/api-keys/')) return ids.apiKey;
      return 'x1';
    });
  }

  interface Case {
    readonly name: string;
    readonly authorization?: string;
    /** The refusal every spelling must meet; undefined: whatever the plain spelling answers, if a 4xx. */
    readonly expect?: { status: number; type: string };
  }

  const UNAUTHORIZED = { status: 401, type: 'urn:weir:problem:unauthorized' };
  const FORBIDDEN = { status: 403, type: 'urn:weir:problem:forbidden' };

  function casesOf(route: RouteEntry): Case[] {
    const auth = route.auth!;
    const common: Case[] = [
      { name: 'no credential', expect: UNAUTHORIZED },
      { name: 'a malformed credential', authorization: 'Basic d2Vpcjp3ZWly', expect: UNAUTHORIZED },
    ];
    if (auth.kind === 'admin') {
      return [
        ...common,
        { name: 'a wrong admin token', authorization: `Bearer ${TEST_ADMIN_TOKEN}x`, expect: UNAUTHORIZED },
        { name: "a tenant's write key (the wrong kind)", authorization: `Bearer ${a.writeKey}`, expect: UNAUTHORIZED },
        { name: "another tenant's read key", authorization: `Bearer ${b.readKey}`, expect: UNAUTHORIZED },
      ];
    }
    const cases: Case[] = [
      ...common,
      { name: 'an unknown API key', authorization: `Bearer ${generateApiKey().token}`, expect: UNAUTHORIZED },
      { name: 'a revoked API key', authorization: `Bearer ${revokedKey}`, expect: UNAUTHORIZED },
      { name: 'the admin token (the wrong kind)', authorization: `Bearer ${TEST_ADMIN_TOKEN}`, expect: UNAUTHORIZED },
    ];
    if (auth.kind === 'tenant' && auth.scope !== 'read') cases.push({ name: 'a read key (the wrong scope)', authorization: `Bearer ${a.readKey}`, expect: FORBIDDEN });
    if (auth.kind === 'tenant' && auth.scope === 'write') cases.push({ name: 'a rules key (the wrong scope)', authorization: `Bearer ${rulesKey}`, expect: FORBIDDEN });
    if (route.path.includes(':')) cases.push({ name: "another tenant's write key on A's resources", authorization: `Bearer ${b.writeKey}` });
    return cases;
  }

  it('has a decision for every served route, and only the marked ones are public', () => {
    expect(table.length).toBeGreaterThan(60);
    expect(table.filter((r) => !r.auth).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    // Adding a public route is a decision to make here too, deliberately.
    expect([...new Set(table.filter((r) => r.auth?.kind === 'public').map((r) => r.path))].sort()).toEqual(['/graphql', '/health', '/health/ready']);
  });

  it('refuses every guarded route the same way in every spelling, for every kind of wrong credential', { timeout: 600_000 }, async () => {
    const guarded = table.filter((r) => r.auth?.kind !== 'public');
    const failures: string[] = [];
    const jobs = guarded.flatMap((route) => {
      const path = concrete(route);
      const statics = route.path.split('/').slice(1).map((s) => !s.startsWith(':'));
      return casesOf(route).map((c) => ({ route, path, statics, c }));
    });
    let requests = 0;
    await inBatches(jobs, 6, async ({ route, path, statics, c }) => {
      const where = `${route.method} ${route.path} with ${c.name}`;
      const plain = await send(base, route.method, path, c.authorization);
      requests++;
      const expected = c.expect ?? { status: plain.status, type: plain.type ?? '' };
      if (c.expect && (plain.status !== c.expect.status || (route.method !== 'HEAD' && plain.type !== c.expect.type))) {
        failures.push(`${where}, plain: ${plain.status} ${plain.body.slice(0, 200)}`);
        return;
      }
      if (!c.expect && (plain.status < 400 || plain.status >= 500 || plain.body.includes(a.tenantId))) {
        failures.push(`${where}, plain: ${plain.status} ${plain.body.slice(0, 200)}`);
        return;
      }
      for (const spelling of spellingsOf(path, statics).slice(1)) {
        const got = await send(base, route.method, spelling.path, c.authorization);
        requests++;
        const same = got.status === expected.status && (route.method === 'HEAD' || got.type === expected.type) && got.challenged === plain.challenged;
        const unrouted = got.status === 404 && (route.method === 'HEAD' || got.type === 'urn:weir:problem:not-found');
        if (same || (!spelling.same && unrouted)) continue;
        failures.push(`${where}, ${spelling.name} (${spelling.path}): ${got.status} ${got.body.slice(0, 200)}; plain was ${plain.status}`);
      }
    });
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(3000);
  });

  it('answers every spelling of /graphql without a valid key with UNAUTHENTICATED, and a read key on a mutation with FORBIDDEN', async () => {
    const graphql = table.filter((r) => r.path === '/graphql').map((r) => r.method);
    expect(graphql).toEqual(expect.arrayContaining(['GET', 'POST']));
    const failures: string[] = [];
    const credentials: [string, string | undefined, string, string][] = [
      ['no credential', undefined, '{ tenant { id } }', 'UNAUTHENTICATED'],
      ['an unknown key', `Bearer ${generateApiKey().token}`, '{ tenant { id } }', 'UNAUTHENTICATED'],
      ['the admin token', `Bearer ${TEST_ADMIN_TOKEN}`, '{ tenant { id } }', 'UNAUTHENTICATED'],
      ['a read key on a mutation', `Bearer ${a.readKey}`, `mutation { deleteSlo(id: "${ids.slo}") }`, 'FORBIDDEN'],
    ];
    for (const spelling of spellingsOf('/graphql', [true])) {
      for (const [name, authorization, query, code] of credentials) {
        const got = await send(base, 'POST', spelling.path, authorization, JSON.stringify({ query }));
        if (got.status === 404 && !spelling.same) continue;
        const errors = (JSON.parse(got.body) as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
        if (errors[0]?.extensions?.code !== code || got.body.includes(a.tenantId)) failures.push(`POST ${spelling.path} with ${name}: ${got.status} ${got.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    const slo = await asA('GET', `/v1/slos/${ids.slo}`);
    expect(slo.status, 'the refused mutation changed nothing').toBe(200);
  });

  it('agrees with the checked-in OpenAPI document: every guarded operation declares the credential the server demanded', async () => {
    const mismatches: string[] = [];
    for (const route of table.filter((r) => r.handler !== 'external' && r.method !== 'HEAD')) {
      const operation = openapi.paths[route.path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[route.method.toLowerCase()];
      const path = concrete(route);
      const declared = JSON.stringify(operation?.security);
      if (route.auth?.kind === 'public') {
        if (declared !== '[]') mismatches.push(`${route.method} ${route.path} is public, the document says ${declared}`);
        continue;
      }
      // Probed with a read key, which can change nothing: an admin route refuses it (401), a write or rules route
      // too (403), and a read route serves it. Refused, it is probed with a rules key: a write route refuses that too.
      const readKey = await send(base, route.method, path, `Bearer ${a.readKey}`);
      const demanded = readKey.status === 401 ? 'adminToken' : 'apiKey';
      if (declared !== JSON.stringify([{ [demanded]: [] }])) mismatches.push(`${route.method} ${route.path}: the server demands ${demanded}, the document says ${declared}`);
      const scope = readKey.status !== 403 ? 'read' : (await send(base, route.method, path, `Bearer ${rulesKey}`)).status === 403 ? 'write' : 'rules';
      if (demanded === 'apiKey' && operation?.['x-weir-scope'] !== scope) {
        mismatches.push(`${route.method} ${route.path}: the server demands scope ${scope}, the document says ${operation?.['x-weir-scope']}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
