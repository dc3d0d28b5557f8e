import { Global, Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { IdempotencySweeper } from './idempotency.sweeper';

/** Global, so any module's controllers can use @Idempotent() and IdempotencyService. */
@Global()
@Module({
  providers: [IdempotencyRepository, IdempotencyService, IdempotencyInterceptor, IdempotencySweeper],
  exports: [IdempotencyService, IdempotencyInterceptor],
})
export class IdempotencyModule {}
