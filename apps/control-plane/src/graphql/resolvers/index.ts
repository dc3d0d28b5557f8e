import { BundlesResolver } from './bundles.resolver';
import { DeploymentsResolver } from './deployments.resolver';
import { KeyGroupMovesResolver } from './key-group-moves.resolver';
import { ScalingDecisionsResolver } from './scaling-decisions.resolver';
import { ScalingPolicyResolver } from './scaling-policy.resolver';
import { SlosResolver } from './slos.resolver';
import { SubscriptionsResolver } from './subscriptions.resolver';
import { TenantResolver } from './tenant.resolver';
import { WorkersResolver } from './workers.resolver';

/** Every resolver of the schema: the module provides them, the schema generator builds the SDL from them. */
export const GRAPHQL_RESOLVERS = [WorkersResolver, TenantResolver, BundlesResolver, DeploymentsResolver, KeyGroupMovesResolver, ScalingDecisionsResolver, ScalingPolicyResolver, SlosResolver, SubscriptionsResolver];
