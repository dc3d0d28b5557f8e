import { Module } from '@nestjs/common';
import { CommandGateway } from './command-gateway';
import { FleetRepository } from './fleet.repository';

/**
 * Placement: the fleet's free slots (FleetRepository) and the commands that carry a run's layout to its workers
 * (CommandGateway). Where processes go is pure arithmetic beside them (placement.ts, subtask-plan.ts), used by the
 * reconciler; this module knows nothing of deployments' lifecycle.
 */
@Module({
  providers: [FleetRepository, CommandGateway],
  exports: [FleetRepository, CommandGateway],
})
export class PlacementModule {}
