import { Global, Module } from '@nestjs/common';
import { EventPublisher } from './events';
import { RedisPubSub } from './redis-pubsub';

/**
 * The control plane's event bus, over Redis pub/sub (fan-out across instances): features publish through
 * EventPublisher; adapters that push to clients (the GraphQL subscriptions) subscribe through RedisPubSub.
 */
@Global()
@Module({
  providers: [EventPublisher, RedisPubSub],
  exports: [EventPublisher, RedisPubSub],
})
export class EventsModule {}
