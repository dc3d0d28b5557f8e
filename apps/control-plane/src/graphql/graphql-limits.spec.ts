import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '@weir/config';
import { describe, expect, it } from 'vitest';
import { graphqlLimitsOf, operationCost, QUERY_LIMIT_EXCEEDED, wsSubscribeCheck, type GraphqlLimits } from './graphql-limits';
import { graphqlRuntime } from './graphql-runtime';

const schema = graphqlRuntime.buildSchema(readFileSync(resolve(__dirname, '../../schema.gql'), 'utf8'));
const schemaRef = { schema };
const defaults = graphqlLimitsOf(loadConfig({}));

function check(query: string, variables: Record<string, unknown> = {}, limits: GraphqlLimits = defaults) {
  return wsSubscribeCheck(limits, schemaRef, { query, variables });
}

function refusal(query: string, limits: GraphqlLimits = defaults): Record<string, unknown> {
  const result = check(query, {}, limits);
  expect(Array.isArray(result), `expected ${query.slice(0, 60)}… to be refused`).toBe(true);
  const [error] = result as import('graphql').GraphQLError[];
  return { message: error.message, ...error.extensions };
}

/** The largest legitimate operations in the repo's tests (measured over every document in test/ and bench/), a dashboard's, and introspection. */
const LEGITIMATE = [
  ['query ($id: ID!) { deployment(id: $id) { keyGroupMoves { items { moveId state report { moved { keyGroup bytes } } } } } }', { id: 'd' + '0'.repeat(24) }],
  ['query ($id: ID!) { deployment(id: $id) { partitionerMode scalingDecisions { items { decisionId moves { keyGroup } inputs } } } }', { id: 'x' }],
  ['query ($id: ID!) { deployment(id: $id) { runNo layout { runNo processes { index workerId subtasks { operatorId subtask keyGroups { start end } } } } } }', { id: 'x' }],
  ['{ tenant { id name quotas { maxDeployments } } workers(limit: 5) { items { id status } nextCursor } }', {}],
  ['subscription ($id: ID!) { deploymentMetrics(deploymentId: $id) { deploymentId at subtasks recordsInPerSec recordsOutPerSec } }', { id: 'x' }],
  // A dashboard: the first page of deployments with their latest metrics and SLOs, and the tenant.
  [
    '{ tenant { id name } running: deployments(status: RUNNING) { items { id name status desiredState metrics { recordsInPerSec sourceBacklog } slos { id name status { state compliance } } } nextCursor } failed: deployments(status: FAILED, limit: 10) { items { id name } } }',
    {},
  ],
  [graphqlRuntime.getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }), {}],
] as const;

describe('GraphQL limits', () => {
  it('have defaults every legitimate operation in the repo passes', () => {
    for (const [query, variables] of LEGITIMATE) {
      const result = check(query, variables);
      expect(Array.isArray(result) ? (result as { message: string }[]).map((e) => e.message) : [], query.slice(0, 80)).toEqual([]);
    }
  });

  it('refuse the 20,000-alias request at the token limit, while parsing', () => {
    const query = `{ ${Array.from({ length: 20_000 }, (_, i) => `a${i}: deployments(limit: 200) { items { id } }`).join(' ')} }`;
    expect(query.length).toBeGreaterThan(800_000);
    const error = refusal(query);
    expect(error).toMatchObject({ code: QUERY_LIMIT_EXCEEDED, limit: 'maxTokens', max: defaults.maxTokens });
    expect(error.message).toMatch(/maxTokens limit.*at most 2000.*split the query/);
  });

  it('refuse too many aliases, naming the limit and what was found', () => {
    const query = `{ ${Array.from({ length: 21 }, (_, i) => `a${i}: tenant { id }`).join(' ')} }`;
    expect(refusal(query)).toMatchObject({ code: QUERY_LIMIT_EXCEEDED, limit: 'maxAliases', max: 20, found: 21 });
    expect(refusal(query).message).toMatch(/maxAliases limit: it has 21 aliased fields, at most 20/);
    // Aliases in fragments count where the fragment is spread.
    const viaFragment = `{ ...F } fragment F on Query { ${Array.from({ length: 21 }, (_, i) => `a${i}: tenant { id }`).join(' ')} }`;
    expect(refusal(viaFragment)).toMatchObject({ limit: 'maxAliases', found: 21 });
  });

  it('refuse too deep a selection', () => {
    const deep = '{ deployment(id: "x") { layout { processes { subtasks { keyGroups { start } } } } } }';
    expect(check(deep)).not.toBeInstanceOf(Array);
    expect(refusal(deep, { ...defaults, maxDepth: 4 })).toMatchObject({ code: QUERY_LIMIT_EXCEEDED, limit: 'maxDepth', max: 4, found: 6 });
  });

  it('refuse too many directives', () => {
    const query = `{ tenant { ${Array.from({ length: 21 }, () => 'id @include(if: true)').join(' ')} } }`;
    expect(refusal(query)).toMatchObject({ code: QUERY_LIMIT_EXCEEDED, limit: 'maxDirectives', max: 20 });
  });

  it('cost a page by its limit, with the variables, and refuse what would read too much', () => {
    expect(operationCost(schema, graphqlRuntime.parse('{ deployments(limit: 200) { items { id } } }'), {})).toBe(1);
    expect(operationCost(schema, graphqlRuntime.parse('{ deployments(limit: 200) { items { id slos { id } } } }'), {})).toBe(201);
    expect(operationCost(schema, graphqlRuntime.parse('{ deployments { items { slos { id } } } }'), {})).toBe(51);
    const nested = 'query ($n: Int) { deployments(limit: $n) { items { slos { id } metrics { subtasks } scalingPolicy { source } keyGroupMoves(limit: 200) { items { moveId } } scalingDecisions { items { decisionId } } } } }';
    expect(check(nested, { n: 1 })).not.toBeInstanceOf(Array);
    const refused = check(nested, { n: 200 }) as import('graphql').GraphQLError[];
    expect(refused[0].extensions).toMatchObject({ code: QUERY_LIMIT_EXCEEDED, limit: 'maxCost', max: 1000, found: 1 + 200 * 5 });
    expect(refused[0].message).toMatch(/maxCost limit: it has 1001 cost.*lower limit/);
  });

  it('refuse fragments spread over and over as too costly, and leave bad variables to execution', () => {
    // 40 × 40 × 40 spreads of `tenant { id }` in ~300 tokens, within the depth limit: more nodes than graphql-query-complexity walks.
    const frags = ['fragment F0 on Query { tenant { id } }'];
    for (let i = 1; i <= 3; i++) frags.push(`fragment F${i} on Query { ${Array.from({ length: 40 }, () => `...F${i - 1}`).join(' ')} }`);
    const bomb = `{ ...F3 } ${frags.join(' ')}`;
    expect(refusal(bomb)).toMatchObject({ code: QUERY_LIMIT_EXCEEDED, limit: 'maxCost', max: 1000 });
    expect(refusal(bomb).message).toMatch(/it has more than 1000 cost/);
    // A variable that does not coerce is execution's to refuse (it does, before any resolver): not a cost error.
    const paged = 'query ($n: Int!) { deployments(limit: $n) { items { slos { id } } } }';
    expect(check(paged, { n: 'many' })).not.toBeInstanceOf(Array);
    expect(operationCost(schema, graphqlRuntime.parse(paged), { n: 'many' })).toBe(0);
  });

  it('leave graphql its own errors over graphql-ws (syntax, unknown fields), one error shape', () => {
    expect(refusal('{ tenant {')).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED' });
    expect(refusal('{ tenant { secret } }')).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('are configured from the environment, each a positive whole number', () => {
    expect(defaults).toEqual({ maxTokens: 2000, maxDepth: 10, maxAliases: 20, maxDirectives: 20, maxCost: 1000 });
    expect(graphqlLimitsOf(loadConfig({ WEIR_GRAPHQL_MAX_COST: '50', WEIR_GRAPHQL_MAX_ALIASES: '3' }))).toMatchObject({ maxCost: 50, maxAliases: 3 });
    expect(() => loadConfig({ WEIR_GRAPHQL_MAX_DEPTH: '0' })).toThrow(/WEIR_GRAPHQL_MAX_DEPTH: expected a positive whole number/);
  });
});
