import { Injectable } from '@nestjs/common';
import { NotFoundProblem } from '../problems/problem.exception';
import { ApiKeyRevocations } from './api-key-revocations';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { TenantDataSweeper } from './tenant-data-sweeper';
import { TenantDb } from './tenant-db';
import { liveDeployments } from './tenant-deletion';
import { TenantHasLiveDeploymentsProblem } from './tenant-deletion.problems';
import { TenantDeletionRepository } from './tenant-deletion.repository';

/**
 * Offboarding: removes a tenant and everything it has, and nothing of anyone else. Steps, each safe to repeat, so a
 * DELETE that fails anywhere (503/500) is finished by the next DELETE of the same id:
 * 1. one transaction: refuse while a deployment could run (409, nothing changed), else mark the tenant
 *    (deleting_since) and revoke every key; then forget the keys here and broadcast them to the other instances.
 *    From the mark on, the reconciler leaves the tenant's deployments alone and quota checks refuse creates.
 * 2. outside any transaction: delete its S3 objects and Kafka topics (slow, and not transactional anyway);
 * 3. one transaction holding the tenant's row FOR UPDATE: sweep S3 once more, then delete every row, tenant last.
 * A resumed deletion skips step 1's check: the mark already stopped everything, and the tenant, whose keys are
 * revoked, could not act on a 409.
 */
@Injectable()
export class TenantDeletionService {
  constructor(
    private readonly db: TenantDb,
    private readonly deletion: TenantDeletionRepository,
    private readonly sweeper: TenantDataSweeper,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly revocations: ApiKeyRevocations,
  ) {}

  async delete(tenantId: string): Promise<void> {
    const keyIds = await this.markAndRevoke(tenantId);
    for (const keyId of keyIds) this.authenticator.invalidate(keyId);
    // publish() logs and swallows its failures: the revocations are committed, the cache TTL bounds the rest.
    await Promise.all(keyIds.map((keyId) => this.revocations.publish(keyId)));

    const deploymentIds = await this.db.run(tenantId, (client) => this.deletion.deploymentIds(client, tenantId));
    await this.sweeper.sweep(tenantId, deploymentIds);

    await this.db.run(tenantId, async (client) => {
      // Gone already: a concurrent DELETE finished first.
      if ((await this.deletion.lockTenant(client, tenantId, 'FOR UPDATE')) === undefined) return;
      // No row of the tenant can be inserted while this lock is held. A bundle upload that committed after the sweep
      // above left its object (it copies before its row commits), so objects are listed once more, now that none
      // can follow: an upload still waiting on the lock fails on the foreign key and removes its own object.
      await this.sweeper.sweepObjects(tenantId);
      await this.deletion.deleteAll(client, tenantId);
    });
  }

  /** Step 1; the ids of every key of the tenant (to invalidate and broadcast, again when resuming). */
  private markAndRevoke(tenantId: string): Promise<string[]> {
    return this.db.run(tenantId, async (client) => {
      await this.deletion.lockDeployments(client, tenantId);
      const mark = await this.deletion.lockTenant(client, tenantId, 'FOR NO KEY UPDATE');
      if (mark === undefined) throw new NotFoundProblem('tenant', tenantId);
      if (mark === null) {
        // Read after both locks: a deploy that committed between them is seen, and none can commit after.
        const live = liveDeployments(await this.deletion.deployments(client, tenantId));
        if (live.length) throw new TenantHasLiveDeploymentsProblem(tenantId, live);
        await this.deletion.mark(client, tenantId);
      }
      return this.deletion.revokeAllKeys(client, tenantId);
    });
  }
}
