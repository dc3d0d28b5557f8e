import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, concatMap, from, of, switchMap, type Observable } from 'rxjs';
import { pathOf } from '../logging/request-hooks';
import type { AuthenticatedRequest } from '../tenancy/auth.decorators';
import { requestFingerprint } from './fingerprint';
import { idempotencyKeyOf } from './idempotency-key';
import { IdempotencyService, PLATFORM_SCOPE } from './idempotency.service';

type HttpRequest = FastifyRequest & AuthenticatedRequest;

export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Applied by @Idempotent(): runs after the auth guard, so the scope is the caller's tenant (or the platform for
 * admin routes). The fingerprint covers method, path and the parsed JSON body.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const key = idempotencyKeyOf(request.headers);
    if (key === undefined) return next.handle();
    const scope = request.principal?.tenantId ?? (request.platformAdmin ? PLATFORM_SCOPE : undefined);
    if (!scope) throw new Error('@Idempotent() on a route without an authenticated caller');
    const fingerprint = requestFingerprint(request.method, pathOf(request.url), request.body ?? null);
    return from(this.idempotency.begin(scope, key, fingerprint)).pipe(
      switchMap((outcome) => {
        if (outcome.kind === 'replay') {
          reply.status(outcome.statusCode).header(REPLAYED_HEADER, 'true');
          return of(outcome.body);
        }
        return next.handle().pipe(
          concatMap(async (body: unknown) => {
            await outcome.complete(reply.statusCode, body);
            return body;
          }),
          catchError(async (err: unknown) => {
            // The key is freed so a corrected retry can use it; if even that fails, the claim goes stale in 5 min.
            await outcome.release().catch(() => undefined);
            throw err;
          }),
        );
      }),
    );
  }
}
