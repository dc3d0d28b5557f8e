import { Inject, Injectable } from '@nestjs/common';
import { toDatabaseError, type Pool } from '@weir/db';
import { PG_POOL } from '../infrastructure/tokens';
import type { Tenant } from './tenant';
import { TENANT_COLUMNS, toTenant, type TenantRow } from './tenants.repository';

/**
 * Every tenant, for the platform administrator (GET /v1/tenants) and nothing else. The application role sees a
 * tenants row only under its own app.tenant_id, so the list goes through the SECURITY DEFINER function
 * weir_tenants_page (see its migration), which pages the tenants' own columns and reads nothing else. No other
 * table is read across tenants here: one tenant's details and changes take TenantDb.run(<that tenant>).
 */
@Injectable()
export class TenantDirectory {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Up to `limit` tenants in id order, after `afterId` when given. */
  async list(limit: number, afterId: string | undefined): Promise<Tenant[]> {
    try {
      const { rows } = await this.pool.query<TenantRow>(
        `SELECT ${TENANT_COLUMNS} FROM weir_tenants_page($1, $2)`,
        [afterId ?? null, limit],
      );
      return rows.map(toTenant);
    } catch (err) {
      throw toDatabaseError(err, 'list tenants');
    }
  }
}
