import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import { toPage, type Page } from '../pagination/cursor';
import { NotFoundProblem } from '../problems/problem.exception';
import { generateApiKey } from './api-key-format';
import { ApiKeyRevocations } from './api-key-revocations';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ApiKeysRepository } from './api-keys.repository';
import type { Scope } from './principal';
import type { ApiKey } from './tenant';
import { TenantDb } from './tenant-db';
import { TenantBeingDeletedProblem } from './tenant-deletion.problems';
import { TenantDeletionRepository } from './tenant-deletion.repository';

export interface CreatedApiKey {
  readonly key: ApiKey;
  /** `weir_<id>_<secret>`: returned once, never stored, never logged. */
  readonly token: string;
}

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly db: TenantDb,
    private readonly keys: ApiKeysRepository,
    private readonly deletion: TenantDeletionRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly revocations: ApiKeyRevocations,
  ) {}

  /**
   * A new key for the tenant; 404 when the tenant does not exist (admin bootstrap names it by id), 409 when it is
   * being deleted. The tenant's row is read FOR SHARE, which the deletion's mark (FOR NO KEY UPDATE) waits for: a
   * key created concurrently either commits first and is revoked with the others, or sees the mark.
   */
  async create(tenantId: string, name: string, scope: Scope): Promise<CreatedApiKey> {
    return this.db.run(tenantId, async (client) => {
      const mark = await this.deletion.lockTenant(client, tenantId, 'FOR SHARE');
      if (mark === undefined) throw new NotFoundProblem('tenant', tenantId);
      if (mark) throw new TenantBeingDeletedProblem(tenantId);
      return this.createIn(client, tenantId, name, scope);
    });
  }

  /** Within a caller's transaction (tenant creation issues no key, but tests and tools may). */
  async createIn(client: PoolClient, tenantId: string, name: string, scope: Scope): Promise<CreatedApiKey> {
    const generated = generateApiKey();
    const key = await this.keys.insert(client, { id: generated.keyId, tenantId, name, scope, secretSha256: generated.secretSha256 });
    return { key, token: generated.token };
  }

  async list(tenantId: string, limit: number, afterId: string | undefined): Promise<Page<ApiKey>> {
    const rows = await this.db.readWith(tenantId, (client) => this.keys.list(client, tenantId, limit + 1, afterId));
    return toPage(rows, limit, (k) => k.id);
  }

  /**
   * Revokes at once: this instance forgets the key now, the others as soon as Redis delivers the broadcast (within
   * AUTH_CACHE_TTL_MS if it cannot). Idempotent.
   */
  async revoke(tenantId: string, id: string): Promise<ApiKey> {
    const key = await this.db.run(tenantId, (client) => this.keys.revoke(client, tenantId, id));
    if (!key) throw new NotFoundProblem('API key', id);
    this.authenticator.invalidate(id);
    await this.revocations.publish(id);
    return key;
  }
}
