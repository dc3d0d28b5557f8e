import { Global, Module } from '@nestjs/common';
import { ApiRateLimiter } from './api-rate-limiter';

/** The API's rate limits per key and per tenant; global, so the auth guard (tenancy) injects ApiRateLimiter. */
@Global()
@Module({ providers: [ApiRateLimiter], exports: [ApiRateLimiter] })
export class RateLimitsModule {}
