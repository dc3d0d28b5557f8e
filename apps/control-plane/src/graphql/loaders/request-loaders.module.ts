import { Module } from '@nestjs/common';
import { KeyGroupMovesModule } from '../../moves/key-group-moves.module';
import { PartitionerModule } from '../../partitioner/partitioner.module';
import { ScalingPolicyModule } from '../../scaling-policy/scaling-policy.module';
import { SlosModule } from '../../slos/slos.module';
import { RequestLoadersFactory } from './request-loaders';

/** The loaders' factory, for the GraphQL context (GraphQLModule's options are built outside GraphqlModule's providers). */
@Module({
  imports: [SlosModule, ScalingPolicyModule, KeyGroupMovesModule, PartitionerModule],
  providers: [RequestLoadersFactory],
  exports: [RequestLoadersFactory],
})
export class RequestLoadersModule {}
