import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WS_TRY_AGAIN_LATER } from '../../../apps/control-plane/src/graphql/graphql.module';
import { closedPort, deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { connectWs, gql } from './support';

// A well-formed key whose id cannot be looked up: Postgres is unreachable.
const KEY = `weir_${'0'.repeat(24)}_${'x'.repeat(43)}`;
let app: RunningControlPlane;
let config: ReturnType<typeof testConfig>;

beforeAll(async () => {
  config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_PG_URL: `postgres://weir_app:weir_app@127.0.0.1:${await closedPort()}/weir` });
  app = await startControlPlane(config);
});

afterAll(async () => {
  await app?.close();
  await deleteQueues(config);
});

describe('GraphQL while Postgres is down', () => {
  it('answers SERVICE_UNAVAILABLE over HTTP, without internals', async () => {
    const { body } = await gql(app.url, KEY, '{ tenant { id } }');
    expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stacktrace/);
  });

  it('closes a graphql-ws connection with "try again later" instead of calling the key invalid', async () => {
    const ws = connectWs(app.url, `Bearer ${KEY}`);
    expect(await ws.closed).toBe(WS_TRY_AGAIN_LATER);
    await ws.client.dispose();
  });
});
