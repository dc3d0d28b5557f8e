import { Module } from '@nestjs/common';
import { SloMinuteCloser } from './slo-minute-closer';
import { SlosController } from './slos.controller';
import { SlosRepository } from './slos.repository';
import { SlosService } from './slos.service';

/** Latency SLOs: REST /v1/slos, per-minute evaluation fed by the metrics path, breaches as events. */
@Module({
  controllers: [SlosController],
  providers: [SlosRepository, SlosService, SloMinuteCloser],
  exports: [SlosService],
})
export class SlosModule {}
