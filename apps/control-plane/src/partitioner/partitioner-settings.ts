import type { DeploymentConfig } from '../deployments/deployment';
import type { InvalidParameter } from '../problems/problem-details';

/**
 * How often the partitioner plans a deployment (a deployment property, a string as every property). Each look reads
 * the subtasks' latest snapshots, so a shorter interval reacts sooner on noisier figures; the policy's cool-down
 * (5 min per key group) keeps moves rare whatever the interval.
 */
export const PARTITIONER_INTERVAL_PROPERTY = 'partitioner.interval-ms';

/** Half a minute: a few heartbeats' worth of snapshots between looks, and a settled move before the next look. */
export const DEFAULT_PARTITIONER_INTERVAL_MS = 30_000;
const MIN_MS = 1_000;
const MAX_MS = 3_600_000;

export class PartitionerSettingsError extends Error {
  override readonly name = 'PartitionerSettingsError';
}

export function partitionerIntervalOf(config: DeploymentConfig): number {
  const raw = config.properties?.[PARTITIONER_INTERVAL_PROPERTY];
  if (raw === undefined) return DEFAULT_PARTITIONER_INTERVAL_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_MS || n > MAX_MS) {
    throw new PartitionerSettingsError(`properties.${PARTITIONER_INTERVAL_PROPERTY} must be an integer in [${MIN_MS}, ${MAX_MS}], not "${raw}"`);
  }
  return n;
}

/** The property's problem, for a 400 at deploy time rather than a controller that cannot read it. */
export function partitionerViolations(properties: Readonly<Record<string, string>> | undefined): InvalidParameter[] {
  try {
    partitionerIntervalOf({ properties });
    return [];
  } catch (err) {
    if (!(err instanceof PartitionerSettingsError)) throw err;
    return [{ in: 'body', name: `config.properties.${PARTITIONER_INTERVAL_PROPERTY}`, reason: err.message }];
  }
}
