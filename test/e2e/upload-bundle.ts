import type { WeirConfig } from '@weir/config';
import { insertBundle, type Api, type BuiltJob } from '../control-plane/deployments/support';

/**
 * Stores a bundle for the end-to-end test. The bundles API (POST /v1/bundles) is built beside deployments; until it
 * answers, the bundle is stored the way that API stores it (S3 object under the tenant, row through RLS).
 */
export async function uploadBundle(config: WeirConfig, client: Api, tenantId: string, job: BuiltJob, meta: { name: string; version: string }): Promise<string> {
  void client;
  return insertBundle(config, tenantId, job, meta);
}
