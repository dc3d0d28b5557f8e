import type { DeploymentConfig } from '../deployments/deployment';

/**
 * How long a run may wait for free slots before the deployment goes FAILED with the reason (a deployment property,
 * a string as every property). Chosen over running at what fits: a job at a parallelism the tenant did not ask for
 * would meet neither their latency objective nor their quota's expectations, and a later rescale would be a restart
 * anyway; FAILED says plainly what is missing, and `PATCH {desiredState: RUNNING}` tries again.
 */
export const PLACEMENT_TIMEOUT_PROPERTY = 'placement.timeout-ms';

/** Five minutes: long enough for a worker restart or a rolling deploy of the fleet, short enough to be noticed. */
export const DEFAULT_PLACEMENT_TIMEOUT_MS = 300_000;
const MIN_MS = 1_000;
const MAX_MS = 7 * 86_400_000;

export class PlacementSettingsError extends Error {
  override readonly name = 'PlacementSettingsError';
}

export function placementTimeoutOf(config: DeploymentConfig): number {
  const raw = config.properties?.[PLACEMENT_TIMEOUT_PROPERTY];
  if (raw === undefined) return DEFAULT_PLACEMENT_TIMEOUT_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_MS || n > MAX_MS) {
    throw new PlacementSettingsError(`properties.${PLACEMENT_TIMEOUT_PROPERTY} must be an integer in [${MIN_MS}, ${MAX_MS}], not "${raw}"`);
  }
  return n;
}

/** The placement property's problem, for a 400 at deploy time rather than a reconciler that cannot read it. */
export function placementViolations(properties: Readonly<Record<string, string>> | undefined): { in: 'body'; name: string; reason: string }[] {
  try {
    placementTimeoutOf({ properties });
    return [];
  } catch (err) {
    if (!(err instanceof PlacementSettingsError)) throw err;
    return [{ in: 'body', name: `config.properties.${PLACEMENT_TIMEOUT_PROPERTY}`, reason: err.message }];
  }
}
