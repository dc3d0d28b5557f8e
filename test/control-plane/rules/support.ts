import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildBundle } from '@weir/bundle';
import { encodeKey, keyGroupFor, operatorIdsOf } from '@weir/engine';
import { buildFraudJob, fraudRulesSchema, type FraudJobTopics } from '../../../examples/fraud-detection';
import type { Platform } from '../../support/platform';
import { type BuiltJob, type Api, waitForStatus } from '../deployments/support';
import { eventually } from '../support/control-plane';

const FRAUD_INDEX = resolve(__dirname, '../../../examples/fraud-detection/index.ts');
export const FRAUD_MAX_PARALLELISM = 8;
export const FRAUD_MAX_WINDOW_MS = 60_000;

/** The fraud job's topics as test/support/platform.ts creates them: each field's suffix under `t.<tenantId>.`. */
export const FRAUD_TOPICS = {
  transactionsTopic: 'transactions', rulesTopic: 'rules', alertsTopic: 'alerts', shadowAlertsTopic: 'shadow-alerts', ruleAcksTopic: 'rule-acks',
} as const;
/** Transactions and alerts on two partitions (two input channels per routing subtask); rules and acks on one. */
export const FRAUD_PARTITIONS = { transactionsTopic: 2, alertsTopic: 2, shadowAlertsTopic: 2 } as const;

/** A fraud deployment's `config.topics`: the job's logical topic names → the tenant's topics. */
export function fraudTopicsConfig(topics: FraudJobTopics): Record<string, string> {
  return { transactions: topics.transactionsTopic, rules: topics.rulesTopic, alerts: topics.alertsTopic, 'shadow-alerts': topics.shadowAlertsTopic!, 'rule-acks': topics.ruleAcksTopic };
}

/** Settings the test bundle and its manifest share. */
export function fraudSettings(topics: FraudJobTopics) {
  return { ...topics, maxWindowMs: FRAUD_MAX_WINDOW_MS, maxOutOfOrdernessMs: 200, idleTimeoutMs: 60_000, maxParallelism: FRAUD_MAX_PARALLELISM };
}

/**
 * The fraud job as a bundle, built by libs/bundle the way a user's is: a generated entry file exports the job built
 * with these topics and the test's settings, and the bundler brings in the job's files and @weir/rules.
 */
export async function fraudBundle(topics: FraudJobTopics): Promise<BuiltJob> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-fraud-bundle-'));
  try {
    const entry = join(dir, 'job.ts');
    await writeFile(entry, `import { buildFraudJob } from ${JSON.stringify(FRAUD_INDEX)};\nexport default buildFraudJob(${JSON.stringify(fraudSettings(topics))});\n`);
    const built = await buildBundle(entry);
    return { code: built.code, sha256: built.sha256 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The operator ids of the job graph (the manifest lists them). */
export function fraudOperatorIds(topics: FraudJobTopics): string[] {
  return operatorIdsOf(buildFraudJob(fraudSettings(topics)));
}

export async function uploadFraudBundle(baseUrl: string, token: string, topics: FraudJobTopics, version = '1.0.0'): Promise<string> {
  const job = await fraudBundle(topics);
  const manifest = {
    name: 'fraud-detection', version, entryPoint: 'job.js', operatorIds: fraudOperatorIds(topics), rulesSchema: fraudRulesSchema(FRAUD_MAX_WINDOW_MS),
    defaultParallelism: 2, maxParallelism: FRAUD_MAX_PARALLELISM, topics: Object.values(topics),
  };
  const form = new FormData();
  form.append('manifest', JSON.stringify(manifest));
  form.append('bundle', new Blob([job.code]), 'job.js');
  const res = await fetch(`${baseUrl}/v1/bundles`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await res.json()) as { id?: string; detail?: string };
  if (res.status !== 201 || !body.id) throw new Error(`bundle upload answered ${res.status}: ${body.detail ?? JSON.stringify(body)}`);
  return body.id;
}

export interface RolloutBody {
  id: string;
  version: number;
  kind: string;
  phase: string;
  rulesOffset: string | null;
  acknowledgedSubtasks: number;
  totalSubtasks: number | null;
  subtasks: { operatorId: string; subtask: number; appliedVersion: number | null; rulesOffset: string | null; inputPosition: Record<string, string> | null }[];
  message: string | null;
}

/** Uploads the fraud job to the platform's tenant and deploys it on its topics; resolves with its id once RUNNING. */
export async function deployFraud(platform: Platform<keyof typeof FRAUD_TOPICS>, parallelism: number): Promise<string> {
  await uploadFraudBundle(platform.cp.url, platform.tenant.writeKey, platform.topics);
  const id = await platform.deploy({
    name: 'fraud',
    bundle: { name: 'fraud-detection', version: '1.0.0' },
    parallelism: { default: parallelism },
    config: { topics: fraudTopicsConfig(platform.topics) },
  });
  await waitForStatus(platform.client, id, 'RUNNING', 60_000);
  return id;
}

/** Waits until the rollout leaves ROLLING_OUT; fails with its last state. */
export async function waitForRollout(client: Api, deploymentId: string, rolloutId: string, timeoutMs = 30_000): Promise<RolloutBody> {
  let last: RolloutBody | undefined;
  try {
    return await eventually(`rollout ${rolloutId}`, async () => {
      last = (await client.get(`/v1/deployments/${deploymentId}/rules/rollouts/${rolloutId}`)).body as RolloutBody;
      return last.phase !== 'ROLLING_OUT' ? last : undefined;
    }, { timeoutMs, everyMs: 50 });
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen ${JSON.stringify(last)}`);
  }
}

/** Reads a topic from the start until `until` holds (bounded), then `settleMs` more. */

export { parseJson as parse, readUntil } from '../../support/read-topic';

/** Which routing subtask owns a transaction, from the run's key-group ranges of `operatorId`. */
export function ownerOf(ranges: { subtask: number; keyGroups: number[][] }[], txId: string): number {
  const kg = keyGroupFor(encodeKey(txId), FRAUD_MAX_PARALLELISM);
  const owner = ranges.find((r) => r.keyGroups.some(([a, b]) => kg >= a && kg <= b));
  if (!owner) throw new Error(`no subtask owns key group ${kg}`);
  return owner.subtask;
}

/** Alerts on every transaction, so every judgement is visible and names its version. */
export const everyTx = (limit = 1) => ({
  ruleId: 'every-tx', state: 'ACTIVE', groupingKeys: ['payer'], function: 'COUNT', comparison: '>=', limit, windowMs: 1_000,
});

/**
 * Checks a subtask's acknowledged input position against what happened: on each input channel (source partition →
 * routing subtask), a transaction at or after the subtask's position for its partition must be judged by `version`,
 * one before it by another version (a partition missing from the position: all of it after). Returns the mismatches.
 */
export function switchMismatches(
  judged: readonly { partition: number; offset: string; txId: string; version: number }[],
  topic: string,
  ranges: { subtask: number; keyGroups: number[][] }[],
  positionOf: (subtask: number) => Record<string, string> | null,
  version: number,
): string[] {
  const out: string[] = [];
  for (const j of judged) {
    const subtask = ownerOf(ranges, j.txId);
    const position = positionOf(subtask);
    if (!position) {
      out.push(`subtask ${subtask} reported no input position`);
      continue;
    }
    const from = BigInt(position[`${topic}:${j.partition}`] ?? '0');
    if ((BigInt(j.offset) >= from) !== (j.version === version)) {
      out.push(`${j.txId} at ${j.partition}:${j.offset} judged by v${j.version}, subtask ${subtask} switched to v${version} at ${from}`);
    }
  }
  return out;
}
