import type { DeploymentConfig } from '../deployments/deployment';

/**
 * Records per second each keyed subtask may take (a deployment property, a string as every property): the worker
 * caps every keyed subtask's rate with it (apps/worker's capacityOf), so a subtask's capacity is set by time rather
 * than by CPU. For capacity planning and benchmarks: n processes capped this way stand for n machines on one.
 */
export const SUBTASK_CAPACITY_PROPERTY = 'subtask.max-records-per-second';

export class CapacitySettingsError extends Error {
  override readonly name = 'CapacitySettingsError';
}

/** The cap, or undefined when the deployment sets none (no cap). */
export function subtaskCapacityOf(config: DeploymentConfig): number | undefined {
  const raw = config.properties?.[SUBTASK_CAPACITY_PROPERTY];
  if (raw === undefined) return undefined;
  // The worker reads it with Number(); refusing what it would read as nothing (or as a number it was not meant to
  // be: "", " 5", "0x10") keeps the two agreeing.
  const n = /^\d+(\.\d+)?([eE][+-]?\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n <= 0) {
    throw new CapacitySettingsError(`properties.${SUBTASK_CAPACITY_PROPERTY} must be a positive number of records per second (e.g. 5000 or 2.5), not "${raw}"`);
  }
  return n;
}

/** The capacity property's problem, for a 400 at deploy time rather than a worker that ignores it. */
export function capacityViolations(properties: Readonly<Record<string, string>> | undefined): { in: 'body'; name: string; reason: string }[] {
  try {
    subtaskCapacityOf({ properties });
    return [];
  } catch (err) {
    if (!(err instanceof CapacitySettingsError)) throw err;
    return [{ in: 'body', name: `config.properties.${SUBTASK_CAPACITY_PROPERTY}`, reason: err.message }];
  }
}
