import { Injectable } from '@nestjs/common';
import type { LiveRescale, Parallelism, RescaleState } from '../deployments/deployment';
import { EventPublisher } from '../events/events';

/** What a live rescale publishes on `weir:<prefix>:rescales:<tenantId>:<deploymentId>` at each change of state or progress. */
export interface RescaleMessage {
  readonly deploymentId: string;
  readonly rescaleId: string;
  readonly runNo: number;
  readonly state: RescaleState;
  readonly fromParallelism: Parallelism;
  readonly toParallelism: Parallelism;
  readonly fromProcesses: number;
  readonly toProcesses: number;
  readonly moved: number;
  readonly total: number;
  readonly reason: string;
  /** Epoch ms. */
  readonly requestedAt: number;
  readonly finishedAt: number | null;
}

export function toRescaleMessage(deploymentId: string, r: LiveRescale): RescaleMessage {
  return {
    deploymentId,
    rescaleId: r.rescaleId,
    runNo: r.runNo,
    state: r.state,
    fromParallelism: r.fromParallelism,
    toParallelism: r.toParallelism,
    fromProcesses: r.fromProcesses,
    toProcesses: r.toProcesses,
    moved: r.moved,
    total: r.total,
    reason: r.reason,
    requestedAt: r.requestedAt.getTime(),
    finishedAt: r.finishedAt?.getTime() ?? null,
  };
}

/**
 * Live rescales out to GraphQL subscribers (liveRescales), after the reconciler's step that changed them commits.
 * Best effort, as every subscription event: the record is in Postgres, and the deployment shows its latest rescale.
 */
@Injectable()
export class RescaleEvents {
  constructor(private readonly events: EventPublisher) {}

  publish(tenantId: string, deploymentId: string, rescale: LiveRescale): Promise<void> {
    return this.events.publish('rescales', tenantId, deploymentId, toRescaleMessage(deploymentId, rescale));
  }
}
