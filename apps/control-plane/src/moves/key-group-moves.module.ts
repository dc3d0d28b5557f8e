import { Module } from '@nestjs/common';
import { BundleReader } from '../deployments/bundle-reader';
import { DeploymentsModule } from '../deployments/deployments.module';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { KeyGroupMoveEvents } from './key-group-move-events';
import { KeyGroupMovesController } from './key-group-moves.controller';
import { KeyGroupMovesRepository } from './key-group-moves.repository';
import { KeyGroupMovesService } from './key-group-moves.service';

/**
 * Live key-group moves of running deployments: the REST API and its record (deployment_key_group_moves). The
 * reconciler (DeploymentsModule re-exports it) sends and settles them; GraphQL reads them through the service.
 */
@Module({
  imports: [DeploymentsModule],
  controllers: [KeyGroupMovesController],
  providers: [KeyGroupMovesService, KeyGroupMovesRepository, KeyGroupMoveEvents, DeploymentsRepository, BundleReader],
  exports: [KeyGroupMovesService],
})
export class KeyGroupMovesModule {}
