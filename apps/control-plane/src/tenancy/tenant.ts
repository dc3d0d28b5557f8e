import { randomBytes } from 'node:crypto';
import type { TenantQuotas } from './quotas';
import type { Scope } from './principal';

export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly quotas: TenantQuotas;
  readonly createdAt: Date;
  /** Set by the first step of DELETE /v1/tenants/{id}: the tenant is on its way out (keys revoked, creates refused). */
  readonly deletingSince: Date | null;
}

/** What the platform administrator may change of a tenant; what is left out stays as it is. */
export interface TenantPatch {
  readonly name?: string;
  readonly quotas?: Partial<TenantQuotas>;
}

export interface ApiKey {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly scope: Scope;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  /** Approximate: written every flush interval, not on each request (ApiKeyUsage). */
  readonly lastUsedAt: Date | null;
}

/**
 * Tenant ids are generated, never chosen: 't' + 20 hex characters. They fit Kafka topic prefixes (`t.<id>.`) and S3
 * keys, and can never collide with the reserved idempotency scope `_platform`.
 */
export function newTenantId(): string {
  return `t${randomBytes(10).toString('hex')}`;
}
