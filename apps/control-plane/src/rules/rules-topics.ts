import type { SqlClient } from '@weir/db';
import { tenantTopicPrefix } from '@weir/engine';

/** The logical topic names a deployment's config maps to the job's rules input and acks output. */
export const RULES_TOPIC_NAME = 'rules';
export const ACKS_TOPIC_NAME = 'rule-acks';
export const SHADOW_ALERTS_TOPIC_NAME = 'shadow-alerts';

export interface RulesTarget {
  readonly deploymentId: string;
  /** The bundle's rules schema; a deployment's own may be narrower (DeploymentRulesSchemas). */
  readonly rulesSchema: Record<string, unknown>;
  readonly bundle: { readonly key: string; readonly sha256: string };
  readonly config: { readonly topics?: Record<string, string>; readonly properties?: Record<string, string> };
  readonly rulesTopic: string;
  readonly acksTopic: string;
  readonly shadowAlertsTopic: string;
}

/**
 * Where a deployment's rules go: the topics its config names (`config.topics.rules`, `config.topics["rule-acks"]`,
 * already checked to lie under `t.<tenantId>.`), else `t.<tenantId>.<deploymentId>.rules` and so on. Null when the
 * deployment does not exist for this tenant (RLS).
 */
export async function rulesTargetOf(client: SqlClient, tenantId: string, deploymentId: string): Promise<RulesTarget | null> {
  const { rows } = await client.query<{
    config: { topics?: Record<string, string>; properties?: Record<string, string> };
    rules_schema: Record<string, unknown> | null;
    s3_key: string;
    sha256: string;
  }>(
    `SELECT d.config, b.manifest -> 'rulesSchema' AS rules_schema, b.s3_key, b.sha256 FROM deployments d JOIN bundles b ON b.id = d.bundle_id WHERE d.id = $1`,
    [deploymentId],
  );
  if (!rows[0]) return null;
  const topics = rows[0].config.topics ?? {};
  const fallback = (name: string) => `${tenantTopicPrefix(tenantId)}${deploymentId}.${name}`;
  return {
    deploymentId,
    rulesSchema: rows[0].rules_schema ?? { type: 'object' },
    bundle: { key: rows[0].s3_key, sha256: rows[0].sha256 },
    config: rows[0].config,
    rulesTopic: topics[RULES_TOPIC_NAME] ?? fallback(RULES_TOPIC_NAME),
    acksTopic: topics[ACKS_TOPIC_NAME] ?? fallback(ACKS_TOPIC_NAME),
    // The fraud job's default shadow output is `<alerts topic>.shadow`.
    shadowAlertsTopic: topics[SHADOW_ALERTS_TOPIC_NAME] ?? (topics.alerts ? `${topics.alerts}.shadow` : fallback(SHADOW_ALERTS_TOPIC_NAME)),
  };
}
