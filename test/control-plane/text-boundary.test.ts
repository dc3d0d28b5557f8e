/**
 * Text at the HTTP boundary, against the real app: NUL, lone surrogates and bytes that are not UTF-8 in paths,
 * queries, pagination cursors and bodies are a 400 problem naming the parameter, on every route (generated from the
 * served route table and the checked-in OpenAPI document), before any database call (an instance whose Postgres is
 * unreachable still answers 400, not 503). And every error the HTTP layer produces by itself is problem details.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable, type RouteEntry } from '../../apps/control-plane/src/tenancy';
import { insertDeployment } from './graphql/support';
import { adminHeaders, closedPort, deleteQueues, startControlPlane, testConfig, uniquePrefix, type ProblemBody, type RunningControlPlane } from './support/control-plane';
import { createTestTenant, type TestTenant } from './support/tenants';

interface OpenApiOperation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, unknown> };
}
const openapi = JSON.parse(readFileSync(join(__dirname, '../../openapi/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, OpenApiOperation>> };
const operationOf = (route: RouteEntry) => openapi.paths[route.path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[route.method.toLowerCase()];

/** A cursor as this API would encode one, around a payload it never would. */
const forgedCursor = (payload: Buffer | string) => Buffer.from(payload).toString('base64url');
const FORGED_CURSORS = {
  NUL: forgedCursor('{"v":1,"after":"a\\u0000b"}'),
  'a lone surrogate': forgedCursor('{"v":1,"after":"\\ud800"}'),
  'bytes that are not UTF-8': forgedCursor(Buffer.concat([Buffer.from('{"v":1,"after":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')])),
  // The bundle list's key is JSON inside the cursor: a NUL escaped one level down.
  'a NUL inside the key': forgedCursor(JSON.stringify({ v: 1, after: '["a\\u0000","1.0.0"]' })),
};

async function problemOf(res: Response): Promise<ProblemBody> {
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  return (await res.json()) as ProblemBody;
}

/** Raw bytes on a socket, for what an HTTP client library would refuse to send; resolves with the whole answer. */
function rawExchange(port: number, request: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

describe('text at the boundary', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  let cp: RunningControlPlane;
  let table: RouteEntry[];
  let tenant: TestTenant;
  const deploymentId = `d${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    cp = await startControlPlane(config);
    table = routeTable(cp.app).filter((r) => r.method !== 'HEAD' && r.handler !== 'external' && r.auth?.kind !== 'public');
    tenant = await createTestTenant(config);
    await insertDeployment(config, tenant.tenantId, deploymentId);
  });

  afterAll(async () => {
    await cp?.close();
    await tenant?.cleanup();
    await deleteQueues(config);
  });

  const credentialOf = (route: RouteEntry) => (route.auth?.kind === 'admin' ? adminHeaders() : { authorization: `Bearer ${tenant.writeKey}` });
  const valueOf = (route: RouteEntry, name: string) =>
    route.path.startsWith('/v1/tenants/') ? tenant.tenantId : name === 'id' && route.path.startsWith('/v1/deployments/') ? deploymentId : name === 'version' ? '1' : 'x1';
  const concrete = (route: RouteEntry, replace: Record<string, string> = {}) =>
    route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => replace[name] ?? valueOf(route, name));
  const call = (route: RouteEntry, path: string, body?: Buffer | string) =>
    fetch(`${cp.url}${path}`, {
      method: route.method,
      headers: { ...credentialOf(route), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
    });

  it('refuses a forged cursor holding NUL, a lone surrogate or non-UTF-8 on every list route, naming `cursor`', async () => {
    const lists = table.filter((r) => operationOf(r)?.parameters?.some((p) => p.in === 'query' && p.name === 'cursor'));
    expect(lists.length).toBeGreaterThanOrEqual(8);
    const wrong: string[] = [];
    for (const route of lists) {
      for (const [what, cursor] of Object.entries(FORGED_CURSORS)) {
        // Only the bundle list's key is JSON: elsewhere that cursor's key is plain text with a backslash in it.
        if (what === 'a NUL inside the key' && route.path !== '/v1/bundles') continue;
        const res = await call(route, `${concrete(route)}?cursor=${cursor}`);
        const body = (await res.json()) as ProblemBody;
        if (res.status !== 400 || !body.errors?.some((e) => e.in === 'query' && e.name === 'cursor')) wrong.push(`${route.method} ${route.path}, ${what}: ${res.status} ${JSON.stringify(body)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses a NUL in each path parameter of every route, naming the parameter', async () => {
    const withParams = table.filter((r) => r.path.includes(':'));
    expect(withParams.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    for (const route of withParams) {
      for (const [, name] of route.path.matchAll(/:([A-Za-z]+)/g)) {
        const res = await call(route, concrete(route, { [name]: 'a%00b' }), route.method === 'GET' || route.method === 'DELETE' ? undefined : '{}');
        const body = (await res.json()) as ProblemBody;
        if (res.status !== 400 || !body.errors?.some((e) => e.in === 'path' && e.name === name)) wrong.push(`${route.method} ${route.path} (${name}): ${res.status} ${JSON.stringify(body)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses NUL and lone surrogates in any field of every JSON body, naming the field', async () => {
    const withBodies = table.filter((r) => operationOf(r)?.requestBody?.content['application/json'] !== undefined);
    expect(withBodies.length).toBeGreaterThanOrEqual(10);
    const wrong: string[] = [];
    for (const route of withBodies) {
      for (const [body, name] of [
        ['{"name":"a\\u0000b"}', 'name'],
        ['{"rules":[{"ruleId":"r\\u0000"}]}', 'rules[0].ruleId'],
        ['{"bundleId":"\\ud800"}', 'bundleId'],
      ] as const) {
        const res = await call(route, concrete(route), body);
        const problem = (await res.json()) as ProblemBody;
        if (res.status !== 400 || !problem.errors?.some((e) => e.in === 'body' && e.name === name)) wrong.push(`${route.method} ${route.path} ${body}: ${res.status} ${JSON.stringify(problem)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses a body whose bytes are not UTF-8, naming the field, and stores nothing (a tenant name FF FE C3)', async () => {
    const name = `bad ${randomBytes(4).toString('hex')} `;
    const body = Buffer.concat([Buffer.from(`{"name":"${name}`), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
    const res = await fetch(`${cp.url}/v1/tenants`, { method: 'POST', headers: adminHeaders({ 'content-type': 'application/json' }), body });
    expect(res.status).toBe(400);
    expect((await problemOf(res)).errors).toEqual([{ in: 'body', name: 'name', reason: expect.stringContaining('not valid UTF-8') }]);
    const listed = (await (await fetch(`${cp.url}/v1/tenants?limit=200`, { headers: adminHeaders() })).text());
    expect(listed).not.toContain(name.trim());
  });

  it('refuses NUL and non-UTF-8 in the query, naming the parameter', async () => {
    for (const [query, name] of [['limit=1%002', 'limit'], ['limit=%FF', 'limit'], ['name=%C3', 'name'], ['%00=1', '(query)']] as const) {
      const res = await fetch(`${cp.url}/v1/bundles?${query}`, { headers: { authorization: `Bearer ${tenant.readKey}` } });
      expect(res.status, query).toBe(400);
      expect((await problemOf(res)).errors, query).toContainEqual(expect.objectContaining({ in: 'query', name }));
    }
  });

  it('refuses NUL and lone surrogates in GraphQL arguments (BAD_USER_INPUT naming the argument), after authentication', async () => {
    const graphql = (query: string, variables: Record<string, unknown>, key?: string) =>
      fetch(`${cp.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ query, variables }),
      }).then(async (res) => (await res.json()) as { errors?: { extensions?: { code?: string; errors?: { argument: string }[] } }[] });
    const create = 'mutation ($v: String) { createDeployment(input: { name: "ab", bundleName: "x", bundleVersion: $v }) { id } }';
    const refused = await graphql(create, { v: '1.0.0\u0000' }, tenant.writeKey);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ argument: 'input.bundleVersion' }] });
    const surrogate = await graphql('query ($n: String) { bundles(name: $n) { items { id } } }', { n: '\ud800' }, tenant.readKey);
    expect(surrogate.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ argument: 'name' }] });
    expect((await graphql(create, { v: '1.0.0\u0000' })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers every error the HTTP layer produces itself as problem details', async () => {
    const expectProblem = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      expect(await problemOf(res)).toMatchObject({ status, title: expect.any(String), type: expect.any(String), detail: expect.any(String) });
    };
    const json = (body: string | Buffer, type = 'application/json') => ({ method: 'POST', headers: adminHeaders({ 'content-type': type }), body });
    await expectProblem(await fetch(`${cp.url}/v1/tenants/%zz`, { headers: adminHeaders() }), 400);
    await expectProblem(await fetch(`${cp.url}/v1/tenants/%FF`, { headers: adminHeaders() }), 400);
    await expectProblem(await fetch(`${cp.url}/v1/tenants/${'a'.repeat(600)}`, { headers: adminHeaders() }), 414);
    await expectProblem(await fetch(`${cp.url}/v1/${'a'.repeat(20_000)}`), 431);
    await expectProblem(await fetch(`${cp.url}/v1/tenants`, json('{"name":')), 400);
    await expectProblem(await fetch(`${cp.url}/v1/tenants`, json('<tenant/>', 'application/xml')), 415);
    await expectProblem(await fetch(`${cp.url}/v1/tenants`, json('name=x', 'application/x-www-form-urlencoded')), 415);
    await expectProblem(await fetch(`${cp.url}/v1/tenants`, json('name', 'text/plain')), 415);
    await expectProblem(await fetch(`${cp.url}/v1/tenants`, json(`{"name":"${'x'.repeat(1_100_000)}"}`)), 413);
    await expectProblem(await fetch(`${cp.url}/v1/no-such-route`), 404);

    const port = Number(new URL(cp.url).port);
    for (const raw of [Buffer.from('NOT HTTP AT ALL\r\n\r\n'), Buffer.concat([Buffer.from('GET /v1/workers/'), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])]) {
      const answer = await rawExchange(port, raw);
      expect(answer, raw.toString('latin1')).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer.toLowerCase()).toContain('content-type: application/problem+json');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400 });
    }
  });
});

describe('text at the boundary, before any database call', () => {
  let config: ReturnType<typeof testConfig>;
  let cp: RunningControlPlane;

  beforeAll(async () => {
    config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_PG_URL: `postgres://weir_app:weir_app@127.0.0.1:${await closedPort()}/weir` });
    cp = await startControlPlane(config);
  });
  afterAll(async () => {
    await cp?.close();
    await deleteQueues(config);
  });

  it('answers 400 naming the parameter while Postgres is unreachable, where reaching it would be a 503', async () => {
    const admin = (path: string, init: RequestInit = {}) => fetch(`${cp.url}${path}`, { ...init, headers: adminHeaders({ 'content-type': 'application/json' }) });
    const cases: [Promise<Response>, string, string][] = [
      [admin('/v1/tenants', { method: 'POST', body: '{"name":"a\\u0000b"}' }), 'body', 'name'],
      [admin('/v1/tenants/t0123456789abcdef0123', { method: 'PATCH', body: '{"name":"\\ud800"}' }), 'body', 'name'],
      [admin(`/v1/tenants?cursor=${FORGED_CURSORS.NUL}`), 'query', 'cursor'],
      [admin('/v1/workers/w%00'), 'path', 'id'],
    ];
    for (const [pending, where, name] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      expect((await problemOf(res)).errors).toContainEqual(expect.objectContaining({ in: where, name }));
    }
    // The same instance does reach Postgres for a clean request: the 400s above are not an accident of the outage.
    expect((await admin('/v1/tenants')).status).toBe(503);
  });
});
