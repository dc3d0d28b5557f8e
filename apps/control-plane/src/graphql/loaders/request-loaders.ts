import { Injectable } from '@nestjs/common';
import { Context } from '@nestjs/graphql';
import DataLoader from 'dataloader';
import { MetricsStore } from '../../metrics/metrics-store';
import type { KeyGroupMove } from '../../moves/key-group-move';
import { KeyGroupMovesService } from '../../moves/key-group-moves.service';
import type { Page } from '../../pagination/cursor';
import type { ScalingDecision } from '../../partitioner/scaling-decision';
import { ScalingDecisionsService } from '../../partitioner/scaling-decisions.service';
import { NotFoundProblem } from '../../problems/problem.exception';
import type { ScalingPolicyChange, ScalingPolicyView } from '../../scaling/scaling-policy';
import { ScalingPolicyService } from '../../scaling-policy/scaling-policy.service';
import type { Slo } from '../../slos/slo';
import { SlosService } from '../../slos/slos.service';
import { loadGrouped, type DeploymentKey, type GroupRead } from './load-grouped';

export type { DeploymentKey } from './load-grouped';

/** A per-deployment page field's key: its arguments, the same for every deployment one selection reaches. */
export interface PageKey extends DeploymentKey {
  readonly limit: number;
  readonly cursor: string | undefined;
}

/** Deployment.slos answers at most this many, in id order. */
export const SLOS_PER_DEPLOYMENT = 200;

/**
 * The per-deployment reads of one GraphQL operation, batched. graphql-js calls a field's resolver for every item of a
 * list before any of them has read anything, so each loader gathers the page's deployments (DataLoader's batch: the
 * loads of one tick) and reads them in one statement or one transaction instead of one each: a page of 200
 * deployments costs a handful of round trips, not 200 per field. Each field answers exactly what its per-deployment
 * read did (the services' `…ByDeployment` methods say which).
 *
 * Nothing is memoized (`cache: false`): the next mutation of a document, or the next event of a subscription, reads
 * afresh what an earlier field of the same operation read, as the per-deployment reads did.
 */
export interface RequestLoaders {
  /** The latest merged metrics as stored (JSON), null while none are. */
  readonly latestMetrics: DataLoader<DeploymentKey, string | null>;
  readonly slos: DataLoader<DeploymentKey, readonly Slo[]>;
  readonly scalingPolicy: DataLoader<DeploymentKey, ScalingPolicyView>;
  readonly scalingPolicyChanges: DataLoader<PageKey, Page<ScalingPolicyChange>>;
  readonly keyGroupMoves: DataLoader<PageKey, Page<KeyGroupMove>>;
  readonly scalingDecisions: DataLoader<PageKey, Page<ScalingDecision>>;
}

/** The operation's loaders, from the GraphQL context (graphql-options.ts makes a set per operation). */
export const Loaders = (): ParameterDecorator => Context('loaders');

/** Makes each operation's loaders over the services that REST reads through too. */
@Injectable()
export class RequestLoadersFactory {
  constructor(
    private readonly metrics: MetricsStore,
    private readonly slos: SlosService,
    private readonly policies: ScalingPolicyService,
    private readonly moves: KeyGroupMovesService,
    private readonly decisions: ScalingDecisionsService,
  ) {}

  create(): RequestLoaders {
    return {
      latestMetrics: loader(async ({ tenantId }, ids) => {
        const values = await this.metrics.readLatestOf(tenantId, ids);
        return new Map(ids.map((id, i) => [id, values[i] ?? null]));
      }, () => null),
      slos: loader(({ tenantId }, ids) => this.slos.listByDeployment(tenantId, ids, SLOS_PER_DEPLOYMENT), () => []),
      scalingPolicy: loader(({ tenantId }, ids) => this.policies.getByDeployment(tenantId, ids), deploymentNotFound),
      scalingPolicyChanges: pageLoader(({ tenantId, limit, cursor }, ids) => this.policies.changesByDeployment(tenantId, ids, limit, cursor)),
      keyGroupMoves: pageLoader(({ tenantId, limit, cursor }, ids) => this.moves.listByDeployment(tenantId, ids, limit, cursor)),
      scalingDecisions: pageLoader(({ tenantId, limit, cursor }, ids) => this.decisions.listByDeployment(tenantId, ids, limit, cursor)),
    };
  }
}

function loader<K extends DeploymentKey, V>(read: GroupRead<K, V>, absent: (key: K) => V | Error, argsOf?: (key: K) => readonly unknown[]): DataLoader<K, V> {
  return new DataLoader<K, V>((keys) => loadGrouped(keys, read, absent, argsOf), { cache: false });
}

/** A page of each deployment; one the tenant does not have is NOT_FOUND, as its per-deployment read says. */
function pageLoader<V>(read: GroupRead<PageKey, Page<V>>): DataLoader<PageKey, Page<V>> {
  return loader(read, deploymentNotFound, (key) => [key.limit, key.cursor ?? null]);
}

function deploymentNotFound(key: DeploymentKey): Error {
  return new NotFoundProblem('deployment', key.deploymentId);
}
