import { Injectable } from '@nestjs/common';
import { toPage, type Page } from '../pagination/cursor';
import { NotFoundProblem } from '../problems/problem.exception';
import type { TenantQuotas } from './quotas';
import { newTenantId, type Tenant, type TenantPatch } from './tenant';
import { TenantDb } from './tenant-db';
import { TenantDirectory } from './tenant-directory';
import { TenantsRepository } from './tenants.repository';

@Injectable()
export class TenantsService {
  constructor(
    private readonly db: TenantDb,
    private readonly tenants: TenantsRepository,
    private readonly directory: TenantDirectory,
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

  /** Every tenant, in id order (platform administration only). */
  async list(limit: number, afterId: string | undefined): Promise<Page<Tenant>> {
    return toPage(await this.directory.list(limit + 1, afterId), limit, (t) => t.id);
  }

  /**
   * Changed as the tenant itself, like every tenant row. A quota lowered below what the tenant uses now applies to
   * the next request only: nothing running is stopped or scaled down, and a deploy or upload beyond it is refused.
   */
  async update(id: string, patch: TenantPatch): Promise<Tenant> {
    const tenant = await this.db.run(id, (client) => this.tenants.update(client, id, patch));
    if (!tenant) throw new NotFoundProblem('tenant', id);
    return tenant;
  }
}
