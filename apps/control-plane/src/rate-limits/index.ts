export { ApiRateLimiter, RATE_LIMIT_REDIS_TIMEOUT_MS } from './api-rate-limiter';
export { registerGraphqlRateLimit } from './graphql-rate-limit.hook';
export { RateLimitsModule } from './rate-limits.module';
export { BURST_WINDOW_SEC, RATE_LIMITED_TYPE, RateLimitedProblem, RateLimits, rateLimitSettingsOf, type LimitScope, type LimitSettings, type RateLimitSettings } from './rate-limits';
