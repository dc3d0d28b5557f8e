import { Module } from '@nestjs/common';
import { ObservationClock } from './observation-clock';
import { PendingWorkerEvents } from './pending-worker-events';
import { WorkerEventsListener } from './worker-events.listener';
import { WorkerLivenessSweeper } from './worker-liveness.sweeper';
import { WorkerRegistry } from './worker-registry.service';
import { WorkersController } from './workers.controller';
import { WorkersRepository } from './workers.repository';

@Module({
  controllers: [WorkersController],
  // One clock per instance, shared by the sweeper (stalls) and the events listener (lags).
  providers: [{ provide: ObservationClock, useFactory: () => new ObservationClock() }, WorkersRepository, WorkerRegistry, PendingWorkerEvents, WorkerLivenessSweeper, WorkerEventsListener],
  exports: [WorkerRegistry],
})
export class WorkersModule {}
