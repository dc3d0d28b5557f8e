import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../tenancy';
import { DependencyChecks } from './dependency-checks';

@Public('liveness and readiness probes carry no credential; the answers hold no tenant data')
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly checks: DependencyChecks,
  ) {}

  /** Liveness: the process is up and serving HTTP. Depends on nothing else, so a database outage never restarts it. */
  @Get()
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Readiness: Postgres, Redis, Kafka and S3 all answer. 503 names each dependency that is down and why. */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: Postgres, Redis, Kafka and S3 answer' })
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.checks.postgres(),
      () => this.checks.redis(),
      () => this.checks.kafkaBroker(),
      () => this.checks.s3(),
    ]);
  }
}
