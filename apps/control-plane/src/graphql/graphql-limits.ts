import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationContext, ValidationRule } from 'graphql';
import type { WeirConfig } from '@weir/config';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { DEFAULT_PAGE_SIZE } from '../pagination/page-query';
import { graphqlRuntime } from './graphql-runtime';

/**
 * What one GraphQL operation may ask for, checked after parsing and before anything is executed (no resolver runs,
 * nothing is read) over HTTP and graphql-ws alike. Over a limit the operation is refused whole with
 * `extensions.code` QUERY_LIMIT_EXCEEDED and `extensions.limit` naming which (HTTP 400).
 *
 * - `maxTokens`: lexical tokens in the document, enforced by graphql-js's own parser (`parse(…, { maxTokens })`),
 *   so an oversized document is abandoned while being read, before it is ever validated.
 * - `maxDepth`, `maxAliases`, `maxDirectives`: graphql-armor's validation rules (per operation; introspection's
 *   `__schema` is not counted for depth).
 * - `maxCost`: graphql-query-complexity with the estimator below, which counts what the resolvers read.
 */
export interface GraphqlLimits {
  readonly maxTokens: number;
  readonly maxDepth: number;
  readonly maxAliases: number;
  readonly maxDirectives: number;
  readonly maxCost: number;
}

export type LimitName = keyof GraphqlLimits;

/** What each limit counts and what to do about it, for the error message. */
const ADVICE: Record<LimitName, { what: string; fix: string }> = {
  maxTokens: { what: 'tokens (names, punctuation and values) in the document', fix: 'ask for fewer fields or split the query into several requests' },
  maxDepth: { what: 'levels of nested selections', fix: 'select less deeply nested fields, or query the nested object by its id in a second request' },
  maxAliases: { what: 'aliased fields', fix: 'send fewer aliases per request (page a list with limit and cursor instead of aliasing it)' },
  maxDirectives: { what: 'directives', fix: 'use fewer directives' },
  maxCost: {
    what: 'cost (1 per object field, times `limit` under a list field: roughly the reads it takes)',
    fix: 'ask for smaller pages (a lower limit), fewer nested lists, or split the query into several requests',
  },
};

export const QUERY_LIMIT_EXCEEDED = 'QUERY_LIMIT_EXCEEDED';

/** The error an operation over a limit is answered with: it names the limit, its value, what was found and what to do. */
export function limitError(limit: LimitName, max: number, found: number | undefined): GraphQLError {
  const { what, fix } = ADVICE[limit];
  const over = found === undefined ? `more than ${max}` : `${found}`;
  return new graphqlRuntime.GraphQLError(`Query refused by the ${limit} limit: it has ${over} ${what}, at most ${max} are allowed; ${fix}.`, {
    extensions: { code: QUERY_LIMIT_EXCEEDED, limit, max, ...(found === undefined ? {} : { found }), http: { status: 400 } },
  });
}

/** graphql-js's message when parse stops at maxTokens. */
const TOO_MANY_TOKENS = /Document contains more (?:than|that) (\d+) tokens/;

/** A parse error caused by maxTokens, as the limit's own error; undefined for any other error. */
export function tokenLimitError(error: { message: string }): GraphQLError | undefined {
  const match = TOO_MANY_TOKENS.exec(error.message);
  return match ? limitError('maxTokens', Number(match[1]), undefined) : undefined;
}

/** graphql-armor reports `… limit of N exceeded, found M.`: the figure found, for our own message. */
function foundIn(message: string): number | undefined {
  const match = /found (\d+(?:\.\d+)?)/.exec(message);
  return match ? Math.round(Number(match[1])) : undefined;
}

/**
 * graphql-armor's validation rules for depth, aliases and directives, reporting our error instead of theirs (and
 * never throwing, so graphql's own rules still report). Its cost rule is off: it weighs only `first`/`last`, and
 * this schema's pages take `limit` (the cost is graphql-query-complexity's, below); its token limit is graphql-js's
 * own parser option instead (armor's re-parses the document in a plugin); field suggestions are left on, as
 * introspection is.
 */
export function limitRules(limits: GraphqlLimits): ValidationRule[] {
  const report = (limit: LimitName) => ({
    n: limits[limit],
    exposeLimits: true,
    propagateOnRejection: false,
    onReject: [(ctx: ValidationContext | null, err: GraphQLError) => ctx?.reportError(limitError(limit, limits[limit], foundIn(err.message)))],
  });
  return new ApolloArmor({
    maxDepth: { ...report('maxDepth'), ignoreIntrospection: true },
    maxAliases: report('maxAliases'),
    maxDirectives: report('maxDirectives'),
    costLimit: { enabled: false },
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: false },
  }).protect().validationRules;
}

/**
 * The cost of a field: 0 for a leaf (scalars and enums are already in hand), 1 for a field with a selection (an
 * object: for the fields that have resolvers of their own, a read — Deployment.metrics, slos, keyGroupMoves, …), and
 * under a field that takes `limit` (a page) its selection's cost counts once per item it may return (`limit`, or
 * the default page size when omitted; a page's `items` cost nothing of their own). So
 * `deployments(limit: 200) { items { id slos { id } } }` costs 1 + 200 × 1 = 201: one list read and 200 SLO reads.
 * The loaders (loaders/request-loaders.ts) fetch those 200 in one statement; the cost still counts them one by one,
 * as the rows read and the answer's size grow with them.
 */
export const readCostEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  if (!graphqlRuntime.isCompositeType(graphqlRuntime.getNamedType(field.type))) return 0;
  // A page's `items` are what its list field read: the items' own fields are counted per item above it.
  if (type.name.endsWith('Page')) return childComplexity;
  const takesLimit = field.args.some((a) => a.name === 'limit');
  const items = takesLimit ? (typeof args.limit === 'number' && args.limit > 0 ? args.limit : DEFAULT_PAGE_SIZE) : 1;
  return 1 + items * childComplexity;
};

/**
 * The cost of the operation; the caller has validated the document. Variables that do not coerce (and an operation
 * name the document lacks) cost 0 here: execution refuses them itself, naming them, before any resolver runs. An
 * operation graphql-query-complexity will not finish costing (over its 10,000 selection nodes, as fragments spread
 * many times over can be) is Infinity: refused.
 */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | null | undefined, operationName?: string | null): number {
  const operation = graphqlRuntime.getOperationAST(document, operationName ?? undefined);
  if (!operation) return 0;
  const coerced = graphqlRuntime.getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 });
  if (coerced.errors) return 0;
  try {
    return getComplexity({
      schema,
      query: document,
      variables: variables ?? {},
      ...(operationName ? { operationName } : {}),
      estimators: [readCostEstimator],
    });
  } catch (err) {
    if (err instanceof graphqlRuntime.GraphQLError) return Number.POSITIVE_INFINITY;
    throw err;
  }
}

/** The error for an operation over the cost limit, or undefined. */
export function costError(limits: GraphqlLimits, cost: number): GraphQLError | undefined {
  return cost > limits.maxCost ? limitError('maxCost', limits.maxCost, Number.isFinite(cost) ? cost : undefined) : undefined;
}

/** The limits as configured (WEIR_GRAPHQL_*, libs/config). */
export function graphqlLimitsOf(config: WeirConfig): GraphqlLimits {
  return {
    maxTokens: config.WEIR_GRAPHQL_MAX_TOKENS,
    maxDepth: config.WEIR_GRAPHQL_MAX_DEPTH,
    maxAliases: config.WEIR_GRAPHQL_MAX_ALIASES,
    maxDirectives: config.WEIR_GRAPHQL_MAX_DIRECTIVES,
    maxCost: config.WEIR_GRAPHQL_MAX_COST,
  };
}

/**
 * Apollo plugin for the cost limit (it needs the request's variables, so it runs once the operation is resolved,
 * before execution). It also keeps the schema for graphql-ws, which validates outside Apollo (wsSubscribeCheck).
 */
export function costLimitPlugin(limits: GraphqlLimits, schemaRef: { schema?: GraphQLSchema }): ApolloServerPlugin {
  return {
    serverWillStart: async ({ schema }) => {
      schemaRef.schema = schema;
    },
    requestDidStart: async () => ({
      didResolveOperation: async ({ schema, document, request, operationName }) => {
        const error = costError(limits, operationCost(schema, document, request.variables, operationName));
        if (error) throw error;
      },
    }),
  };
}

/** What graphql-ws runs the operation with, or the errors it is refused with. */
export type WsCheck = { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null } | GraphQLError[];

/**
 * graphql-ws executes outside Apollo: the same limits, applied in its onSubscribe (parsed once, with maxTokens;
 * validated with graphql's rules and the limits; costed with the variables). The errors go to the client as the
 * operation's `error` message; the connection stays open.
 */
export function wsSubscribeCheck(
  limits: GraphqlLimits,
  schemaRef: { schema?: GraphQLSchema },
  payload: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null },
): WsCheck {
  const schema = schemaRef.schema;
  if (!schema) return [new graphqlRuntime.GraphQLError('The GraphQL schema is not loaded yet; retry later', { extensions: { code: 'SERVICE_UNAVAILABLE' } })];
  let document: DocumentNode;
  try {
    document = graphqlRuntime.parse(payload.query, { maxTokens: limits.maxTokens });
  } catch (err) {
    const error = err as GraphQLError;
    return [tokenLimitError(error) ?? new graphqlRuntime.GraphQLError(error.message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
  }
  const errors = graphqlRuntime.validate(schema, document, [...graphqlRuntime.specifiedRules, ...limitRules(limits)]);
  if (errors.length) return errors.map((e) => (e.extensions.code ? e : new graphqlRuntime.GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })));
  const error = costError(limits, operationCost(schema, document, payload.variables, payload.operationName));
  if (error) return [error];
  return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
}
