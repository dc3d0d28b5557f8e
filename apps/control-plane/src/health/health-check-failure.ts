import { ServiceUnavailableException } from '@nestjs/common';
import type { HealthCheckResult } from '@nestjs/terminus';

/** Terminus signals "not ready" by throwing a 503 whose body is the health result; returns that body. */
export function healthCheckFailure(error: unknown): HealthCheckResult | undefined {
  if (!(error instanceof ServiceUnavailableException)) return undefined;
  const body = error.getResponse() as Partial<HealthCheckResult>;
  return typeof body === 'object' && body !== null && body.status === 'error' && typeof body.details === 'object'
    ? (body as HealthCheckResult)
    : undefined;
}
