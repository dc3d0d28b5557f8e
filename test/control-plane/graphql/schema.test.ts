import { readFileSync } from 'node:fs';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchemaSdl, printSdl, SCHEMA_FILE } from '../../../apps/control-plane/src/graphql/generate-schema';
import { deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';

const STALE = 'apps/control-plane/schema.gql is stale: run node -r @swc-node/register apps/control-plane/src/graphql/generate-schema.ts';
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
let app: RunningControlPlane;

beforeAll(async () => {
  app = await startControlPlane(config);
});

afterAll(async () => {
  await app?.close();
  await deleteQueues(config);
});

describe('the checked-in GraphQL schema', () => {
  it('is what the resolvers generate', async () => {
    expect(await buildSchemaSdl(), STALE).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  });

  it('is the schema the running server serves', () => {
    const served = printSdl(app.app.get(GraphQLSchemaHost).schema);
    const file = readFileSync(SCHEMA_FILE, 'utf8');
    expect(file.slice(file.indexOf('\n\n') + 2), STALE).toBe(served);
  });
});
