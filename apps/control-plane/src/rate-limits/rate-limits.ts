import type { WeirConfig } from '@weir/config';
import { BurstyRateLimiter, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ProblemException } from '../problems/problem.exception';

/** The window a burst is counted in: a limit's burst is how many requests above its rate fit in one such window. */
export const BURST_WINDOW_SEC = 10;

/** Which limit a request was counted against: its API key's, or its tenant's (all the tenant's keys together). */
export type LimitScope = 'key' | 'tenant';

export interface LimitSettings {
  /** Requests per second (fixed one-second windows). */
  readonly perSec: number;
  /** Requests allowed above `perSec` within each BURST_WINDOW_SEC window; 0 for none. */
  readonly burst: number;
}

/** Each limit, or null when it is off (its rate set to 0). */
export type RateLimitSettings = Readonly<Record<LimitScope, LimitSettings | null>>;

export function rateLimitSettingsOf(config: WeirConfig): RateLimitSettings {
  const of = (perSec: number, burst: number): LimitSettings | null => (perSec > 0 ? { perSec, burst } : null);
  return {
    key: of(config.WEIR_RATE_LIMIT_KEY_PER_SEC, config.WEIR_RATE_LIMIT_KEY_BURST),
    tenant: of(config.WEIR_RATE_LIMIT_TENANT_PER_SEC, config.WEIR_RATE_LIMIT_TENANT_BURST),
  };
}

/** `100 requests/s (and a burst of 200 more per 10 s)` */
export function describeLimit(settings: LimitSettings): string {
  const burst = settings.burst > 0 ? ` (and a burst of ${settings.burst} more per ${BURST_WINDOW_SEC} s)` : '';
  return `${settings.perSec} requests/s${burst}`;
}

/** Retry-After in whole seconds, at least 1 (the header has no fractions; 0 would invite an immediate retry). */
export function retryAfterSeconds(msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000));
}

export const RATE_LIMITED_TYPE = 'urn:weir:problem:rate-limited';

/** 429: the caller's key or tenant is over its rate; Retry-After says when the next request will be counted anew. */
export class RateLimitedProblem extends ProblemException {
  override readonly name = 'RateLimitedProblem';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(
    readonly scope: LimitScope,
    readonly settings: LimitSettings,
    readonly retryAfterSec: number,
    ids: { readonly keyId: string; readonly tenantId: string },
  ) {
    const who =
      scope === 'key'
        ? `API key ${ids.keyId} is over its rate limit of ${describeLimit(settings)}`
        : `Tenant ${ids.tenantId} is over its rate limit of ${describeLimit(settings)}, counted over all its API keys`;
    super(429, RATE_LIMITED_TYPE, 'Too Many Requests', `${who}. Retry after ${retryAfterSec} s.`);
    this.headers = { 'Retry-After': String(retryAfterSec) };
  }
}

/** What counts a scope's requests: rate-limiter-flexible's limiters (Redis in the app, memory in unit specs). */
export interface Counter {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
}

/** Builds the limiter of one window of one scope (`rate`: one second; `burst`: BURST_WINDOW_SEC). */
export type LimiterFactory = (scope: LimitScope, window: 'rate' | 'burst', points: number, durationSec: number) => RateLimiterAbstract;

/** One scope's counter: its per-second limiter, backed by a burst limiter when it has a burst. */
export function counterOf(scope: LimitScope, settings: LimitSettings, factory: LimiterFactory): Counter {
  const rate = factory(scope, 'rate', settings.perSec, 1);
  if (settings.burst === 0) return rate;
  return new BurstyRateLimiter(rate, factory(scope, 'burst', settings.burst, BURST_WINDOW_SEC));
}

export interface RateLimitEvents {
  /** A request refused over `scope`'s limit. */
  limited(scope: LimitScope): void;
  /** A request let through because the counters could not be reached (fail open). */
  unchecked(err: Error): void;
  /** The counters answer again after a failure. */
  recovered(): void;
}

type Outcome = { readonly kind: 'ok' } | { readonly kind: 'limited'; readonly res: RateLimiterRes } | { readonly kind: 'error'; readonly err: Error };

/**
 * The per-key and per-tenant limits of API requests. Each authenticated request counts once against its key and
 * once against its tenant (both at once); over either, `admit` throws a RateLimitedProblem naming that limit (the
 * key's first when both are over). When a counter cannot be reached, the request is let through (fail open: a Redis
 * outage must not turn into every request failing) and the events say so.
 */
export class RateLimits {
  private readonly counters: Readonly<Record<LimitScope, Counter | null>>;
  private failing = false;

  constructor(
    private readonly settings: RateLimitSettings,
    factory: LimiterFactory,
    private readonly events: RateLimitEvents,
  ) {
    this.counters = {
      key: settings.key ? counterOf('key', settings.key, factory) : null,
      tenant: settings.tenant ? counterOf('tenant', settings.tenant, factory) : null,
    };
  }

  get enabled(): boolean {
    return this.counters.key !== null || this.counters.tenant !== null;
  }

  async admit(principal: { readonly keyId: string; readonly tenantId: string }): Promise<void> {
    if (!this.enabled) return;
    const [key, tenant] = await Promise.all([count(this.counters.key, principal.keyId), count(this.counters.tenant, principal.tenantId)]);
    for (const [scope, outcome] of [['key', key], ['tenant', tenant]] as const) {
      if (outcome.kind === 'limited') {
        this.events.limited(scope);
        throw new RateLimitedProblem(scope, this.settings[scope]!, retryAfterSeconds(outcome.res.msBeforeNext), principal);
      }
    }
    const failed = key.kind === 'error' ? key : tenant.kind === 'error' ? tenant : undefined;
    if (failed) {
      this.failing = true;
      this.events.unchecked(failed.err);
    } else if (this.failing) {
      this.failing = false;
      this.events.recovered();
    }
  }
}

async function count(counter: Counter | null, id: string): Promise<Outcome> {
  if (!counter) return { kind: 'ok' };
  try {
    await counter.consume(id);
    return { kind: 'ok' };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return { kind: 'limited', res: rejection };
    return { kind: 'error', err: rejection instanceof Error ? rejection : new Error(String(rejection)) };
  }
}
