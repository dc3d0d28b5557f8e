import { Module } from '@nestjs/common';
import { WorkerEventsListener } from './worker-events.listener';
import { WorkerLivenessSweeper } from './worker-liveness.sweeper';
import { WorkerRegistry } from './worker-registry.service';
import { WorkersController } from './workers.controller';
import { WorkersRepository } from './workers.repository';

@Module({
  controllers: [WorkersController],
  providers: [WorkersRepository, WorkerRegistry, WorkerLivenessSweeper, WorkerEventsListener],
  exports: [WorkerRegistry],
})
export class WorkersModule {}
