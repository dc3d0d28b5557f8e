import { Module } from '@nestjs/common';
import { PendingWorkerEvents } from './pending-worker-events';
import { WorkerEventsListener } from './worker-events.listener';
import { WorkerLivenessSweeper } from './worker-liveness.sweeper';
import { WorkerRegistry } from './worker-registry.service';
import { WorkersController } from './workers.controller';
import { WorkersRepository } from './workers.repository';

@Module({
  controllers: [WorkersController],
  providers: [WorkersRepository, WorkerRegistry, PendingWorkerEvents, WorkerLivenessSweeper, WorkerEventsListener],
  exports: [WorkerRegistry],
})
export class WorkersModule {}
