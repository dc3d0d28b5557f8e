import { Global, Module } from '@nestjs/common';
import { EventPublisher } from './events';
import { RedisPubSub } from './redis-pubsub';

/** Subscription events over Redis pub/sub: EventPublisher for any module that publishes, RedisPubSub for resolvers. */
@Global()
@Module({
  providers: [EventPublisher, RedisPubSub],
  exports: [EventPublisher, RedisPubSub],
})
export class EventsModule {}
