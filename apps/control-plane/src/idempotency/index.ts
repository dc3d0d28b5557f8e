export { Idempotent, ApiIdempotencyKey } from './idempotent.decorator';
export { IdempotencyService, PLATFORM_SCOPE, type IdempotencyClaim, type IdempotencyReplay } from './idempotency.service';
export { IdempotencyModule } from './idempotency.module';
export { idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER } from './idempotency-key';
export { requestFingerprint, canonicalJson } from './fingerprint';
export { REPLAYED_HEADER } from './idempotency.interceptor';
export { IdempotencyKeyReusedProblem, IdempotencyKeyInProgressProblem, IDEMPOTENCY_PROBLEM_TYPES } from './idempotency.problems';
