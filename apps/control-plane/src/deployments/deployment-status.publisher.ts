import { Injectable } from '@nestjs/common';
import { EventPublisher, type DeploymentStatusEvent } from '../events/events';

/** Status changes out to GraphQL subscribers (Redis pub/sub, every instance). Best effort: the truth is in Postgres. */
@Injectable()
export class DeploymentStatusPublisher {
  constructor(private readonly events: EventPublisher) {}

  publish(tenantId: string, event: DeploymentStatusEvent): Promise<void> {
    return this.events.deploymentStatus(tenantId, event);
  }
}
