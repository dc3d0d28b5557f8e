import type { ApolloDriverConfig } from '@nestjs/apollo';
import type { WeirConfig } from '@weir/config';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import type { Logger } from 'pino';
import type { ApiKeyAuthenticator, RouteAuth } from '../tenancy';
import { authenticateContext, tokenOf, type GraphqlContext } from './graphql-auth';
import { formatExecutionErrors, formatGraphqlError } from './graphql-errors';
import { costLimitPlugin, graphqlLimitsOf, limitRules, wsSubscribeCheck } from './graphql-limits';
import { graphqlRuntime } from './graphql-runtime';
import type { RequestLoadersFactory } from './loaders/request-loaders';

export const GRAPHQL_PATH = '/graphql';

/**
 * The HTTP route itself takes any caller: authentication is per field, in the GraphQL context (graphql-auth.ts), so
 * no field that needs a tenant answers without a valid API key (an introspection query does).
 */
export const GRAPHQL_ROUTE_AUTH: RouteAuth = { kind: 'public', reason: 'GraphQL authenticates every field in its own context (graphql-auth.ts)' };

/** graphql-ws closes with this code when connection_init carries no valid API key. */
export const WS_UNAUTHORIZED = 4401;
/** …and with this one (WebSocket's "try again later") when the key cannot be checked (Postgres down). */
export const WS_TRY_AGAIN_LATER = 1013;
/** Operations one graphql-ws connection may run at once; more are refused (TOO_MANY_SUBSCRIPTIONS). */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;

interface ClosableSocket {
  close(code: number, reason: string): void;
}

/**
 * Apollo and graphql-ws options. HTTP requests authenticate with `Authorization: Bearer <key>`; graphql-ws
 * connections with `connectionParams.authorization` (`Bearer <key>` or the bare key) at connection_init, closed
 * there with 4401 when missing or invalid. Both go through ApiKeyAuthenticator; resolvers read the principal from
 * the context (graphql-auth.ts). No stack traces, no landing page. Every operation, over HTTP or graphql-ws, is held
 * to the limits of graphql-limits.ts (WEIR_GRAPHQL_*) before anything of it runs.
 */
export function graphqlOptions(authenticator: ApiKeyAuthenticator, logger: Logger, config: WeirConfig, loaders: RequestLoadersFactory): ApolloDriverConfig {
  const formatError = formatGraphqlError(logger.child({ component: 'graphql' }));
  const limits = graphqlLimitsOf(config);
  // Apollo hands its schema to the cost plugin at start; graphql-ws (started after it) validates against the same one.
  const schemaRef: { schema?: GraphQLSchema } = {};
  return {
    path: GRAPHQL_PATH,
    autoSchemaFile: true,
    sortSchema: true,
    graphiql: false,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    autoTransformHttpErrors: false,
    formatError,
    // Limits: tokens while parsing, depth/aliases/directives while validating, cost once the variables are known.
    parseOptions: { maxTokens: limits.maxTokens },
    validationRules: limitRules(limits),
    plugins: [costLimitPlugin(limits, schemaRef)],
    allowBatchedHttpRequests: false,
    // Apollo's Fastify integration passes the request itself; graphql-ws passes its connection context. Either way
    // this runs once per operation, which gets loaders of its own: nothing batched is shared between operations.
    context: async (arg: { headers: Record<string, unknown> } | WsContext): Promise<GraphqlContext> => {
      // Over graphql-ws, re-authenticated per operation (cached for seconds), so a revoked key cannot open new subscriptions.
      const token = isWsContext(arg) ? tokenOf(arg.connectionParams?.authorization, true) : tokenOf(arg.headers.authorization, false);
      return { ...(await authenticateContext(authenticator, token)), loaders: loaders.create() };
    },
    subscriptions: {
      'graphql-ws': {
        path: GRAPHQL_PATH,
        onConnect: async (ctx: WsContext) => {
          const socket = (ctx.extra as { socket?: ClosableSocket }).socket;
          const auth = await authenticateContext(authenticator, tokenOf(ctx.connectionParams?.authorization, true));
          if (auth.principal) return true;
          if (auth.authError?.extensions.code === 'SERVICE_UNAVAILABLE') {
            logger.warn('graphql-ws connection refused: the API key could not be checked');
            socket?.close(WS_TRY_AGAIN_LATER, 'The API key cannot be checked right now; retry later');
          } else {
            socket?.close(WS_UNAUTHORIZED, 'Unauthorized: connectionParams.authorization must hold a valid API key');
          }
          return false;
        },
        // Bounds what one connection can hold open (each subscription keeps a listener and a queue), then holds the
        // operation to the same limits as HTTP: parsed, validated and costed here, so graphql-ws runs what passed.
        onSubscribe: (ctx: WsContext, _id: string, payload: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null }) =>
          Object.keys(ctx.subscriptions).length > MAX_SUBSCRIPTIONS_PER_CONNECTION
            ? [
                new graphqlRuntime.GraphQLError(`At most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} operations per connection; complete some or open another connection`, {
                  extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
                }),
              ]
            : wsSubscribeCheck(limits, schemaRef, payload),
        // graphql-ws executes outside Apollo: format its errors the same way.
        onNext: (_ctx: unknown, _id: unknown, _payload: unknown, _args: unknown, result: ExecutionResult) =>
          result.errors ? { ...result, errors: formatExecutionErrors(formatError, result.errors) } : undefined,
      },
    },
  };
}

function isWsContext(arg: unknown): arg is WsContext {
  return typeof arg === 'object' && arg !== null && 'extra' in arg && 'subscriptions' in arg;
}
