import { Injectable } from '@nestjs/common';
import { toDatabaseError, type PoolClient } from '@weir/db';
import type { PlacementBundle } from '../placement/subtask-plan';

/** A bundle as deployments see it: identity, where its code is, and the manifest fields placement needs. */
export interface DeployableBundle extends PlacementBundle {
  readonly name: string;
  readonly version: string;
  readonly defaultParallelism: number;
  /** Kafka topics the manifest declares the job reads or writes; null when it declares none (see topic-namespace.ts). */
  readonly topics: readonly string[] | null;
}

interface BundleRow {
  id: string;
  name: string;
  version: string;
  sha256: string;
  s3_key: string;
  manifest: { operatorIds?: unknown; maxParallelism?: unknown; defaultParallelism?: unknown; topics?: unknown };
}

const COLUMNS = 'id, name, version, sha256, s3_key, manifest';

/**
 * Reads the `bundles` table (owned by the bundles module) inside the caller's tenant transaction, so RLS makes
 * another tenant's bundle indistinguishable from a missing one.
 */
@Injectable()
export class BundleReader {
  async byId(client: PoolClient, id: string): Promise<DeployableBundle | null> {
    return this.one(client, `SELECT ${COLUMNS} FROM bundles WHERE id = $1`, [id]);
  }

  /** The bundles among `ids`, by id. */
  async byIds(client: PoolClient, ids: readonly string[]): Promise<Map<string, DeployableBundle>> {
    const bundles = await this.all(client, `SELECT ${COLUMNS} FROM bundles WHERE id = ANY($1::text[])`, [ids]);
    return new Map(bundles.map((b) => [b.id, b]));
  }

  async byNameVersion(client: PoolClient, name: string, version: string): Promise<DeployableBundle | null> {
    return this.one(client, `SELECT ${COLUMNS} FROM bundles WHERE name = $1 AND version = $2`, [name, version]);
  }

  private async one(client: PoolClient, sql: string, params: unknown[]): Promise<DeployableBundle | null> {
    return (await this.all(client, sql, params))[0] ?? null;
  }

  private async all(client: PoolClient, sql: string, params: unknown[]): Promise<DeployableBundle[]> {
    try {
      return (await client.query<BundleRow>(sql, params)).rows.map(toBundle);
    } catch (err) {
      throw toDatabaseError(err, 'read bundle');
    }
  }
}

/** Manifests are validated on upload; these defaults only cover fields an older manifest may lack. */
function toBundle(row: BundleRow): DeployableBundle {
  const m = row.manifest;
  const operatorIds = Array.isArray(m.operatorIds) ? m.operatorIds.filter((id): id is string => typeof id === 'string') : [];
  const maxParallelism = typeof m.maxParallelism === 'number' ? m.maxParallelism : 128;
  const defaultParallelism = typeof m.defaultParallelism === 'number' ? m.defaultParallelism : 1;
  const topics = Array.isArray(m.topics) ? m.topics.filter((t): t is string => typeof t === 'string') : null;
  return { id: row.id, name: row.name, version: row.version, key: row.s3_key, sha256: row.sha256, operatorIds, maxParallelism, defaultParallelism, topics };
}
