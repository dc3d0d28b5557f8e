import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/** Documents the Idempotency-Key header and its problems; for handlers that call IdempotencyService themselves. */
export function ApiIdempotencyKey() {
  return applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Makes the create safe to retry: a repeat within 24 h gets the first response again (header Idempotent-Replayed: true). 1-255 printable ASCII characters.',
    }),
    ApiProblemResponse(409, 'A request with this Idempotency-Key is still in progress (or the resource already exists)'),
    ApiProblemResponse(422, 'This Idempotency-Key was used for a different request'),
  );
}

/** Makes a JSON create idempotent under the Idempotency-Key header (see IdempotencyService). */
export function Idempotent() {
  return applyDecorators(UseInterceptors(IdempotencyInterceptor), ApiIdempotencyKey());
}
