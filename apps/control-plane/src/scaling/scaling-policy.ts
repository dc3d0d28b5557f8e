import { DEFAULT_PARTITIONING_POLICY, partitioningPolicy, type PartitioningPolicy } from '@weir/partitioner';
import { AUTOSCALER_SETTINGS, autoscalerPolicyOf, AutoscalerSettingsError, defaultAutoscalerPolicy, type AutoscalerPolicy } from '../autoscaler/autoscaler-settings';
import type { AutoscalerMode, DeploymentConfig, PartitionerMode } from '../deployments/deployment';
import { DEFAULT_PARTITIONER_INTERVAL_MS, partitionerIntervalOf, PartitionerSettingsError } from '../partitioner/partitioner-settings';
import type { InvalidParameter } from '../problems/problem-details';

/**
 * A deployment's scaling policy: what the partitioner and the autoscaler may do and how eagerly, read by both
 * controllers at each look and changed by the tenant while the deployment runs (GET/PATCH
 * /v1/deployments/{id}/scaling-policy, GraphQL `Deployment.scalingPolicy` and `setDeploymentScalingPolicy`). The
 * modes live on the deployment's row (the controllers' due scans filter on them); the rest is stored once a tenant
 * first changes it, and until then is what the deploy-time properties (`partitioner.interval-ms`, `autoscaler.*`) and
 * the defaults say, so a deployment created before the policy existed keeps the behaviour it was created with.
 */
export interface PartitionerSettings {
  /** How often it plans the deployment. */
  readonly intervalMs: number;
  /** Key groups one look may move (planPartitioning's `maxKeyGroupMoves`), before the move-cost feedback cuts it. */
  readonly moveBudget: number;
  /** The hysteresis band: act only above this imbalance (max ÷ fair subtask load) ... */
  readonly actAbove: number;
  /** ... and then plan down to this. */
  readonly aimBelow: number;
  /** A key group that moved within this long stays where it is. */
  readonly coolDownMs: number;
  /** The pause a move may cost: when the latest move's worst key-group pause was longer, the next look moves fewer (move-cost.ts). */
  readonly maxMovePauseMs: number;
}

export type AutoscalerSettings = AutoscalerPolicy;

/** What is stored (deployment_scaling_policies): every field but the modes. */
export interface StoredScalingPolicy {
  readonly partitioner: PartitionerSettings;
  readonly autoscaler: AutoscalerSettings;
}

export interface ScalingPolicy {
  readonly partitioner: PartitionerSettings & { readonly mode: PartitionerMode };
  readonly autoscaler: AutoscalerSettings & { readonly mode: AutoscalerMode };
}

/** A policy as read: where its values come from, and who changed it last. */
export interface ScalingPolicyView {
  readonly deploymentId: string;
  readonly policy: ScalingPolicy;
  /** `properties`: never changed over the API (the deploy-time properties and defaults); `api`: stored. */
  readonly source: 'properties' | 'api';
  /** The last change's time and API key id (null while source is properties). */
  readonly updatedAt: Date | null;
  readonly updatedBy: string | null;
}

/** One change, as recorded in deployment_scaling_policy_changes. */
export interface ScalingPolicyChange {
  readonly changeId: string;
  readonly deploymentId: string;
  readonly changedAt: Date;
  readonly changedBy: string;
  readonly from: ScalingPolicy;
  readonly to: ScalingPolicy;
  /** The dotted names of the fields whose values differ. */
  readonly fields: readonly string[];
}

/** Half a second over the worker's hand-over of a few key groups: a move whose input waited longer than 1 s is costly. */
export const DEFAULT_MAX_MOVE_PAUSE_MS = 1_000;

const DAY_MS = 86_400_000;

export interface Range {
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

/** The partitioner's fields' ranges; moveBudget is at most the bundle's key groups too. */
export const PARTITIONER_RANGES: Readonly<Record<keyof PartitionerSettings, Range>> = {
  intervalMs: { min: 1_000, max: 3_600_000, integer: true },
  moveBudget: { min: 1, max: 32_768, integer: true },
  actAbove: { min: 1.01, max: 4, integer: false },
  aimBelow: { min: 1, max: 4, integer: false },
  coolDownMs: { min: 0, max: DAY_MS, integer: true },
  maxMovePauseMs: { min: 1, max: 600_000, integer: true },
};

/** The autoscaler's, the same as its properties'; min/maxParallelism at most the bundle's maxParallelism too. */
export const AUTOSCALER_RANGES: Readonly<Record<keyof AutoscalerSettings, Range>> = Object.fromEntries(
  AUTOSCALER_SETTINGS.map((s) => [s.field, { min: s.min, max: s.max, integer: s.integer }]),
) as Record<keyof AutoscalerSettings, Range>;

export function defaultPartitionerSettings(): PartitionerSettings {
  return {
    intervalMs: DEFAULT_PARTITIONER_INTERVAL_MS,
    moveBudget: DEFAULT_PARTITIONING_POLICY.maxKeyGroupMoves,
    actAbove: DEFAULT_PARTITIONING_POLICY.actAbove,
    aimBelow: DEFAULT_PARTITIONING_POLICY.aimBelow,
    coolDownMs: DEFAULT_PARTITIONING_POLICY.coolDownMs,
    maxMovePauseMs: DEFAULT_MAX_MOVE_PAUSE_MS,
  };
}

/**
 * The policy a deployment has before any change over the API: its properties (validated at deploy time; a value that
 * slipped past, a deployment older than the property, reads as the default) over the defaults.
 */
export function policyFromProperties(config: DeploymentConfig, bundleMaxParallelism: number): StoredScalingPolicy {
  let intervalMs = DEFAULT_PARTITIONER_INTERVAL_MS;
  try {
    intervalMs = partitionerIntervalOf(config);
  } catch (err) {
    if (!(err instanceof PartitionerSettingsError)) throw err;
  }
  let autoscaler = defaultAutoscalerPolicy(bundleMaxParallelism);
  try {
    autoscaler = autoscalerPolicyOf(config, bundleMaxParallelism);
  } catch (err) {
    if (!(err instanceof AutoscalerSettingsError)) throw err;
  }
  return { partitioner: { ...defaultPartitionerSettings(), intervalMs }, autoscaler };
}

/**
 * What the controllers act on: the stored policy as it stands against the bundle now (an upgrade in mode stateless
 * may have changed its key-group count: the bounds and the budget are capped at it, never out of range).
 */
export function effectiveStoredPolicy(stored: StoredScalingPolicy, bundleMaxParallelism: number): StoredScalingPolicy {
  const maxParallelism = Math.min(stored.autoscaler.maxParallelism, bundleMaxParallelism);
  return {
    partitioner: { ...stored.partitioner, moveBudget: Math.min(stored.partitioner.moveBudget, bundleMaxParallelism) },
    autoscaler: { ...stored.autoscaler, maxParallelism, minParallelism: Math.min(stored.autoscaler.minParallelism, maxParallelism) },
  };
}

/** The partitioner's settings as libs/partitioner's policy, with the budget the move costs leave (move-cost.ts). */
export function partitioningPolicyOf(settings: PartitionerSettings, moveBudget = settings.moveBudget): PartitioningPolicy {
  return partitioningPolicy({ actAbove: settings.actAbove, aimBelow: settings.aimBelow, maxKeyGroupMoves: moveBudget, coolDownMs: settings.coolDownMs });
}

/** A change to the policy: any subset of its fields (PATCH's merge: what is not named stays as it is). */
export interface ScalingPolicyPatch {
  readonly partitioner?: Partial<ScalingPolicy['partitioner']>;
  readonly autoscaler?: Partial<ScalingPolicy['autoscaler']>;
}

/** `current` with `patch` merged in. */
export function mergePolicy(current: ScalingPolicy, patch: ScalingPolicyPatch): ScalingPolicy {
  return { partitioner: { ...current.partitioner, ...patch.partitioner }, autoscaler: { ...current.autoscaler, ...patch.autoscaler } };
}

/**
 * What is wrong with a merged policy against the deployment's bundle, each naming its field (`autoscaler.maxParallelism`)
 * and the allowed range; empty when it may be stored. The request's own checks (types, static ranges) come first
 * (scaling-policy.dto.ts); these are the ones that depend on the bundle or on another field.
 */
export function policyViolations(policy: ScalingPolicy, bundleMaxParallelism: number, where: InvalidParameter['in'] = 'body'): InvalidParameter[] {
  const errors: InvalidParameter[] = [];
  const out = (name: string, reason: string) => errors.push({ in: where, name, reason });
  for (const [field, range] of Object.entries(PARTITIONER_RANGES) as [keyof PartitionerSettings, Range][]) {
    const max = field === 'moveBudget' ? Math.min(range.max, bundleMaxParallelism) : range.max;
    const why = rangeProblem(policy.partitioner[field], { ...range, max }, field === 'moveBudget' && max < range.max ? bundleMaxParallelism : null);
    if (why) out(`partitioner.${field}`, why);
  }
  for (const [field, range] of Object.entries(AUTOSCALER_RANGES) as [keyof AutoscalerSettings, Range][]) {
    const bounded = field === 'maxParallelism' || field === 'minParallelism';
    const max = bounded ? Math.min(range.max, bundleMaxParallelism) : range.max;
    const why = rangeProblem(policy.autoscaler[field], { ...range, max }, bounded && max < range.max ? bundleMaxParallelism : null);
    if (why) out(`autoscaler.${field}`, why);
  }
  if (!errors.length && policy.partitioner.aimBelow > policy.partitioner.actAbove) {
    out('partitioner.aimBelow', `must not exceed partitioner.actAbove (${policy.partitioner.actAbove}): the band is aimBelow ≤ imbalance ≤ actAbove`);
  }
  if (!errors.length && policy.autoscaler.minParallelism > policy.autoscaler.maxParallelism) {
    out('autoscaler.minParallelism', `must not exceed autoscaler.maxParallelism (${policy.autoscaler.maxParallelism})`);
  }
  return errors;
}

/** Why `value` is outside `range`, in the words the API answers with; null when inside. */
export function rangeProblem(value: number, range: Range, bundleMax: number | null = null): string | null {
  if (Number.isFinite(value) && (!range.integer || Number.isInteger(value)) && value >= range.min && value <= range.max) return null;
  const why = bundleMax === null ? '' : ` (the bundle's maxParallelism is ${bundleMax})`;
  return `must be ${range.integer ? 'an integer' : 'a number'} in [${range.min}, ${range.max}]${why}, not ${value}`;
}

/** The dotted names of the fields that differ between two policies (the change record's summary). */
export function changedFields(from: ScalingPolicy, to: ScalingPolicy): string[] {
  const out: string[] = [];
  // In the fields' declared order (a stored policy's keys come back from jsonb in its own order).
  const fields = { partitioner: ['mode', ...Object.keys(PARTITIONER_RANGES)], autoscaler: ['mode', ...Object.keys(AUTOSCALER_RANGES)] };
  for (const part of ['partitioner', 'autoscaler'] as const) {
    const [a, b] = [from[part] as unknown as Record<string, unknown>, to[part] as unknown as Record<string, unknown>];
    for (const key of fields[part]) if (a[key] !== b[key]) out.push(`${part}.${key}`);
  }
  return out;
}

/** The stored part of a policy (the modes live on the deployment). */
export function storedOf(policy: ScalingPolicy): StoredScalingPolicy {
  const { mode: _p, ...partitioner } = policy.partitioner;
  const { mode: _a, ...autoscaler } = policy.autoscaler;
  return { partitioner, autoscaler };
}

export function withModes(stored: StoredScalingPolicy, modes: { readonly partitionerMode: PartitionerMode; readonly autoscalerMode: AutoscalerMode }): ScalingPolicy {
  return { partitioner: { mode: modes.partitionerMode, ...stored.partitioner }, autoscaler: { mode: modes.autoscalerMode, ...stored.autoscaler } };
}

/** What a deployment's policy is: the stored one (each field missing from it read from the properties), or the properties' alone. */
export function policyViewOf(
  deployment: { readonly id: string; readonly config: DeploymentConfig; readonly partitionerMode: PartitionerMode; readonly autoscalerMode: AutoscalerMode },
  bundleMaxParallelism: number,
  row: {
    readonly stored: Partial<{ readonly partitioner: Partial<PartitionerSettings>; readonly autoscaler: Partial<AutoscalerSettings> }>;
    readonly updatedAt: Date;
    readonly updatedBy: string;
  } | null,
): ScalingPolicyView {
  const initial = policyFromProperties(deployment.config, bundleMaxParallelism);
  const stored = row ? { partitioner: { ...initial.partitioner, ...row.stored.partitioner }, autoscaler: { ...initial.autoscaler, ...row.stored.autoscaler } } : initial;
  return {
    deploymentId: deployment.id,
    policy: withModes(effectiveStoredPolicy(stored, bundleMaxParallelism), deployment),
    source: row ? 'api' : 'properties',
    updatedAt: row?.updatedAt ?? null,
    updatedBy: row?.updatedBy ?? null,
  };
}
