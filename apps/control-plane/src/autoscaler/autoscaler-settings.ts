import type { DeploymentConfig } from '../deployments/deployment';
import type { InvalidParameter } from '../problems/problem-details';

/**
 * The autoscaler's policy of one deployment, from its properties (`autoscaler.*`, strings as every property), each
 * with its default. Validated at deploy time (a 400 naming the property); a value that slipped past (a deployment
 * older than the property) reads as the default.
 */
export interface AutoscalerPolicy {
  /** How often it looks. */
  readonly intervalMs: number;
  /** The busy share each subtask is sized for (DS2's target utilization): the rest is headroom for bursts. */
  readonly targetUtilization: number;
  /** A need to scale up must hold this long before it is acted on (a burst shorter than this is absorbed). */
  readonly scaleUpWindowMs: number;
  /** A need to scale down must hold this long (FLINK-36018: scaling down on every dip is what makes jobs flap). */
  readonly scaleDownWindowMs: number;
  /** After any rescale or restart, no decision for this long: the figures describe the change, not the load. */
  readonly cooldownMs: number;
  /** The backlog is to be drained within this long, on top of the ingest rate. */
  readonly catchUpMs: number;
  readonly minParallelism: number;
  /** At most the bundle's maxParallelism (key groups): a subtask owns at least one. */
  readonly maxParallelism: number;
  /** With an SLO, latency above this fraction of its threshold while busy is high scales up before it is missed. */
  readonly sloFraction: number;
}

export interface AutoscalerSetting {
  readonly property: string;
  readonly field: keyof AutoscalerPolicy;
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

const DAY_MS = 86_400_000;
/** Each field's property and range: the deploy-time properties and the scaling policy's API check the same ones. */
export const AUTOSCALER_SETTINGS: readonly AutoscalerSetting[] = [
  { property: 'autoscaler.interval-ms', field: 'intervalMs', min: 1_000, max: 3_600_000, integer: true },
  { property: 'autoscaler.target-utilization', field: 'targetUtilization', min: 0.1, max: 0.95, integer: false },
  { property: 'autoscaler.scale-up-window-ms', field: 'scaleUpWindowMs', min: 0, max: DAY_MS, integer: true },
  { property: 'autoscaler.scale-down-window-ms', field: 'scaleDownWindowMs', min: 0, max: DAY_MS, integer: true },
  { property: 'autoscaler.cooldown-ms', field: 'cooldownMs', min: 0, max: DAY_MS, integer: true },
  { property: 'autoscaler.catch-up-ms', field: 'catchUpMs', min: 1_000, max: DAY_MS, integer: true },
  { property: 'autoscaler.min-parallelism', field: 'minParallelism', min: 1, max: 32_768, integer: true },
  { property: 'autoscaler.max-parallelism', field: 'maxParallelism', min: 1, max: 32_768, integer: true },
  { property: 'autoscaler.slo-fraction', field: 'sloFraction', min: 0.1, max: 1, integer: false },
];
export const AUTOSCALER_PROPERTIES = AUTOSCALER_SETTINGS.map((s) => s.property);

/** The defaults: a look every 15 s, sized for 70% busy, up after 1 min, down after 10 min, 5 min of cool-down. */
export function defaultAutoscalerPolicy(bundleMaxParallelism: number): AutoscalerPolicy {
  return {
    intervalMs: 15_000,
    targetUtilization: 0.7,
    scaleUpWindowMs: 60_000,
    scaleDownWindowMs: 600_000,
    cooldownMs: 300_000,
    catchUpMs: 300_000,
    minParallelism: 1,
    maxParallelism: bundleMaxParallelism,
    sloFraction: 0.8,
  };
}

export class AutoscalerSettingsError extends Error {
  override readonly name = 'AutoscalerSettingsError';

  constructor(
    readonly property: string,
    message: string,
  ) {
    super(message);
  }
}

/** The deployment's policy; throws AutoscalerSettingsError naming the first property out of range. */
export function autoscalerPolicyOf(config: DeploymentConfig, bundleMaxParallelism: number): AutoscalerPolicy {
  const policy: Record<string, number> = { ...defaultAutoscalerPolicy(bundleMaxParallelism) };
  for (const s of AUTOSCALER_SETTINGS) {
    const raw = config.properties?.[s.property];
    if (raw === undefined) continue;
    const n = Number(raw);
    const max = s.field === 'maxParallelism' ? Math.min(s.max, bundleMaxParallelism) : s.max;
    if (raw.trim() === '' || !Number.isFinite(n) || (s.integer && !Number.isInteger(n)) || n < s.min || n > max) {
      const kind = s.integer ? 'an integer' : 'a number';
      const why = s.field === 'maxParallelism' && s.max > max ? ` (the bundle's maxParallelism is ${max})` : '';
      throw new AutoscalerSettingsError(s.property, `properties.${s.property} must be ${kind} in [${s.min}, ${max}]${why}, not "${raw}"`);
    }
    policy[s.field] = n;
  }
  const result = policy as unknown as AutoscalerPolicy;
  if (result.minParallelism > result.maxParallelism) {
    throw new AutoscalerSettingsError(
      'autoscaler.min-parallelism',
      `properties.autoscaler.min-parallelism (${result.minParallelism}) must not exceed the maximum (${result.maxParallelism})`,
    );
  }
  return result;
}

/** The properties' problem, for a 400 at deploy time rather than an autoscaler that cannot read them. */
export function autoscalerViolations(properties: Readonly<Record<string, string>> | undefined, bundleMaxParallelism: number): InvalidParameter[] {
  try {
    autoscalerPolicyOf({ properties }, bundleMaxParallelism);
    return [];
  } catch (err) {
    if (!(err instanceof AutoscalerSettingsError)) throw err;
    return [{ in: 'body', name: `config.properties.${err.property}`, reason: err.message }];
  }
}
