import { Injectable } from '@nestjs/common';
import { NotFoundProblem } from '../problems/problem.exception';
import type { TenantQuotas } from './quotas';
import { newTenantId, type Tenant } from './tenant';
import { TenantDb } from './tenant-db';
import { TenantsRepository } from './tenants.repository';

@Injectable()
export class TenantsService {
  constructor(
    private readonly db: TenantDb,
    private readonly tenants: TenantsRepository,
  ) {}

  /** Inserted as the new tenant itself: the tenants policy admits a row only under its own app.tenant_id. */
  async create(name: string, quotas: Partial<TenantQuotas>): Promise<Tenant> {
    const id = newTenantId();
    return this.db.run(id, (client) => this.tenants.insert(client, id, name, quotas));
  }

  async get(id: string): Promise<Tenant> {
    const tenant = await this.tenants.read(this.db, id);
    if (!tenant) throw new NotFoundProblem('tenant', id);
    return tenant;
  }
}
