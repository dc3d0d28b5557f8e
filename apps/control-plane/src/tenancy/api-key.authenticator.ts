import { Inject, Injectable } from '@nestjs/common';
import { toDatabaseError, type Pool } from '@weir/db';
import { PG_POOL } from '../infrastructure/tokens';
import { parseApiKey, secretMatches } from './api-key-format';
import { ApiKeyUsage } from './api-key-usage';
import { UnauthorizedProblem } from './auth.problems';
import { scopesOf, type Principal, type Scope } from './principal';

interface KeyRecord {
  readonly tenantId: string;
  readonly scope: Scope;
  readonly secretSha256: Buffer;
}

interface CacheEntry {
  readonly record: KeyRecord;
  readonly expiresAt: number;
}

/** How long a looked-up key is trusted: the bound on how late another instance honours a revocation. */
export const AUTH_CACHE_TTL_MS = 5_000;
const AUTH_CACHE_MAX_ENTRIES = 10_000;

const INVALID = 'The API key is invalid or has been revoked';

/**
 * Turns a bearer token into a Principal: REST guard and GraphQL context alike. Lookups go through the
 * SECURITY DEFINER function api_key_for_authentication (see the api_keys migration), because the tenant is not
 * known until the key is found.
 *
 * A small cache keeps the database off the hot path: an entry lives AUTH_CACHE_TTL_MS, so a key revoked through
 * another instance stops working here within that time; revocation through this instance evicts it at once
 * (invalidate). The cache holds hashes, never secrets; unknown ids are not cached, so made-up keys cannot fill it.
 * Concurrent lookups of one key id share one query.
 *
 * Every successful authentication is noted in ApiKeyUsage (in memory, no await), which writes keys' last use
 * periodically: no request waits for, or causes, a database write.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<KeyRecord | null>>();
  /** Bumped by every invalidation, so a lookup that started before a revocation cannot cache the revoked key. */
  private generation = 0;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly usage: ApiKeyUsage,
  ) {}

  /** Resolves the principal, or throws UnauthorizedProblem (never saying whether the id or the secret was wrong). */
  async authenticate(token: string): Promise<Principal> {
    const parsed = parseApiKey(token);
    if (!parsed) throw new UnauthorizedProblem('The bearer token is not a Weir API key (weir_<id>_<secret>)');
    const record = await this.lookup(parsed.keyId);
    if (!record || !secretMatches(parsed.secret, record.secretSha256)) throw new UnauthorizedProblem(INVALID);
    this.usage.note(parsed.keyId, record.tenantId, Date.now());
    return { tenantId: record.tenantId, keyId: parsed.keyId, scopes: scopesOf(record.scope) };
  }

  /** Forget a key at once (it was revoked through this instance). */
  invalidate(keyId: string): void {
    this.generation++;
    this.cache.delete(keyId);
    this.inflight.delete(keyId);
  }

  private async lookup(keyId: string): Promise<KeyRecord | null> {
    const cached = this.cache.get(keyId);
    if (cached && cached.expiresAt > Date.now()) return cached.record;
    if (cached) this.cache.delete(keyId);
    let pending = this.inflight.get(keyId);
    if (!pending) {
      const started: Promise<KeyRecord | null> = this.fetch(keyId).finally(() => {
        if (this.inflight.get(keyId) === started) this.inflight.delete(keyId);
      });
      this.inflight.set(keyId, started);
      pending = started;
    }
    return pending;
  }

  private async fetch(keyId: string): Promise<KeyRecord | null> {
    const generation = this.generation;
    let rows: { tenant_id: string; scope: Scope; secret_sha256: Buffer }[];
    try {
      rows = (await this.pool.query('SELECT tenant_id, scope, secret_sha256 FROM api_key_for_authentication($1)', [keyId])).rows;
    } catch (err) {
      throw toDatabaseError(err, 'authenticate API key');
    }
    if (!rows.length) return null;
    const record = { tenantId: rows[0].tenant_id, scope: rows[0].scope, secretSha256: rows[0].secret_sha256 };
    if (generation !== this.generation) return record;
    if (this.cache.size >= AUTH_CACHE_MAX_ENTRIES) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(keyId, { record, expiresAt: Date.now() + AUTH_CACHE_TTL_MS });
    return record;
  }
}
