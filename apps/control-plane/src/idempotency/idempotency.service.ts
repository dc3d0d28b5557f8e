import { Injectable } from '@nestjs/common';
import { TenantDb } from '../tenancy/tenant-db';
import { IdempotencyKeyInProgressProblem, IdempotencyKeyReusedProblem } from './idempotency.problems';
import { IdempotencyRepository } from './idempotency.repository';

/** The scope of the platform administrator's keys (tenant ids start with 't', so never this). */
export const PLATFORM_SCOPE = '_platform';

/** The first request with a key: serve it, then `complete` (success) or `release` (failure: the key is free again). */
export interface IdempotencyClaim {
  readonly kind: 'new';
  complete(statusCode: number, body: unknown): Promise<void>;
  release(): Promise<void>;
}

/** A repeat of a request already served: answer with what it got. */
export interface IdempotencyReplay {
  readonly kind: 'replay';
  readonly statusCode: number;
  readonly body: unknown;
}

/**
 * Idempotency keys on creates (Stripe's model): the first request with a key is served and its successful response
 * (status + body) recorded for 24 h per (scope, key); a repeat with the same fingerprint gets that response again;
 * the same key with another fingerprint is a 422; a repeat while the first is still being served is a 409.
 * Failed requests record nothing, so a corrected retry may reuse the key.
 *
 * For JSON creates put @Idempotent() on the handler; a handler that reads its body itself (multipart uploads) calls
 * `begin` with a fingerprint of its own.
 */
@Injectable()
export class IdempotencyService {
  constructor(
    private readonly db: TenantDb,
    private readonly repository: IdempotencyRepository,
  ) {}

  async begin(scope: string, key: string, fingerprint: string): Promise<IdempotencyClaim | IdempotencyReplay> {
    const existing = await this.db.run(scope, async (client) => {
      if (await this.repository.claim(client, scope, key, fingerprint)) return null;
      return this.repository.find(client, scope, key);
    });
    if (existing === null) {
      return {
        kind: 'new',
        complete: (statusCode, body) =>
          this.db.run(scope, (client) => this.repository.complete(client, scope, key, fingerprint, statusCode, toJson(body))),
        release: () => this.db.run(scope, (client) => this.repository.release(client, scope, key, fingerprint)),
      };
    }
    if (existing.fingerprint !== fingerprint) throw new IdempotencyKeyReusedProblem();
    if (existing.state === 'pending' || existing.statusCode === null) throw new IdempotencyKeyInProgressProblem();
    return { kind: 'replay', statusCode: existing.statusCode, body: existing.response };
  }
}

/** DTO instances and Dates as the client saw them, so a replay is byte-for-byte the same JSON. */
function toJson(body: unknown): unknown {
  return body === undefined ? null : (JSON.parse(JSON.stringify(body)) as unknown);
}
