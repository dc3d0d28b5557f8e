import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { BundlesModule } from '../bundles';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { DeploymentsModule } from '../deployments/deployments.module';
import { KeyGroupMovesModule } from '../moves/key-group-moves.module';
import { PartitionerModule } from '../partitioner/partitioner.module';
import { ScalingPolicyModule } from '../scaling-policy/scaling-policy.module';
import { SlosModule } from '../slos/slos.module';
import { ApiKeyAuthenticator } from '../tenancy';
import { WorkersModule } from '../workers/workers.module';
import { EventsModule } from '../events/events.module';
import { graphqlOptions } from './graphql-options';
import { RequestLoadersFactory } from './loaders/request-loaders';
import { RequestLoadersModule } from './loaders/request-loaders.module';
import { GRAPHQL_RESOLVERS } from './resolvers';

export { GRAPHQL_PATH, MAX_SUBSCRIPTIONS_PER_CONNECTION, WS_TRY_AGAIN_LATER, WS_UNAUTHORIZED } from './graphql-options';

/**
 * GraphQL at /graphql, code first: queries and mutations over HTTP, subscriptions over graphql-ws on the same path,
 * pushed from Redis pub/sub (events.ts). The SDL is checked in as apps/control-plane/schema.gql
 * (generate-schema.ts; a test fails when it is stale).
 */
@Module({
  imports: [
    EventsModule,
    WorkersModule,
    BundlesModule,
    DeploymentsModule,
    KeyGroupMovesModule,
    PartitionerModule,
    ScalingPolicyModule,
    SlosModule,
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      imports: [RequestLoadersModule],
      inject: [ApiKeyAuthenticator, ROOT_LOGGER, WEIR_CONFIG, RequestLoadersFactory],
      useFactory: graphqlOptions,
    }),
  ],
  providers: [...GRAPHQL_RESOLVERS],
})
export class GraphqlModule {}
